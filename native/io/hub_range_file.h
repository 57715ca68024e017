// native/io/hub_range_file.h — one Hub file read by HTTP Range, as a zip::ByteSource for core's
// parsers (which ask for exact byte ranges and do no I/O themselves).
//
// A read inside a range fetched before costs nothing; any other read is one request for exactly
// the bytes asked. So nothing is downloaded beyond the tail fetched first, the ranges prefetched
// on purpose, and what the parser itself names — for a .bin: the zip directory and data.pkl,
// never a weight.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hub_client.h"
#include "memfit/format/zip_archive.h"

namespace memfit::hub {

class HubRangeFile {
 public:
  // Fetches the file's last `tail` bytes (bytes=-tail): its size and tail in one request.
  // Throws HubError (kEntryNotFound when the repo has no such file).
  HubRangeFile(HubClient& client, std::string repo, std::string file, std::uint64_t tail);
  HubRangeFile(const HubRangeFile&) = delete;
  HubRangeFile& operator=(const HubRangeFile&) = delete;

  const std::string& name() const { return name_; }  // "org/model/pytorch_model.bin"
  std::uint64_t size() const { return size_; }
  // Fetches [first, end) now, in one request, so later reads inside it cost none.
  void prefetch(std::uint64_t first, std::uint64_t end);
  // Reads through the cache; valid while *this lives. A failed request becomes a kZipReadFailed
  // Error for the parser, and the HubError is kept for rethrow_hub_error().
  zip::ByteSource source();
  // After a parser failed: rethrows the HubError behind it, if one was (network, gated, …), so
  // the exit code says what happened rather than "invalid input".
  void rethrow_hub_error() const;

 private:
  std::string read(std::uint64_t offset, std::uint64_t length);

  HubClient& client_;
  std::string repo_, file_, name_;
  std::uint64_t size_ = 0;
  std::vector<std::pair<std::uint64_t, std::string>> chunks_;  // offset → bytes fetched
  std::optional<HubError> hub_error_;
};

}  // namespace memfit::hub
