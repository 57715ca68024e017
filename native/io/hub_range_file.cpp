#include "hub_range_file.h"

#include <fmt/format.h>

namespace memfit::hub {

HubRangeFile::HubRangeFile(HubClient& client, std::string repo, std::string file,
                           std::uint64_t tail)
    : client_(client), repo_(std::move(repo)), file_(std::move(file)), name_(repo_ + "/" + file_) {
  HubClient::Range r = client_.fetch_tail(repo_, file_, tail);
  size_ = *r.total;  // fetch_tail checked it
  chunks_.emplace_back(size_ - r.body.size(), std::move(r.body));
}

void HubRangeFile::prefetch(std::uint64_t first, std::uint64_t end) {
  if (first >= end || end > size_) return;  // nothing to fetch, or not this file's bytes
  HubClient::Range r = client_.fetch_range(repo_, file_, first, end - 1);
  chunks_.emplace_back(first, std::move(r.body));
}

std::string HubRangeFile::read(std::uint64_t offset, std::uint64_t length) {
  if (length == 0) return {};
  for (const auto& [at, bytes] : chunks_)
    if (offset >= at && offset - at <= bytes.size() && length <= bytes.size() - (offset - at))
      return bytes.substr(static_cast<std::size_t>(offset - at), static_cast<std::size_t>(length));
  HubClient::Range r = client_.fetch_range(repo_, file_, offset, offset + length - 1);
  chunks_.emplace_back(offset, r.body);
  return std::move(r.body);  // the parser checks that it got `length` bytes
}

zip::ByteSource HubRangeFile::source() {
  zip::ByteSource s;
  s.name = name_;
  s.size = size_;
  s.read = [this](std::uint64_t offset, std::uint64_t length) -> Result<std::string> {
    if (offset > size_ || length > size_ - offset)
      return Error(ErrorCode::kZipReadFailed,
                   fmt::format("{}: {} bytes at offset {} are past the end ({} bytes)", name_,
                               length, offset, size_));
    try {
      return read(offset, length);
    } catch (const HubError& e) {
      hub_error_ = e;
      return Error(ErrorCode::kZipReadFailed, fmt::format("{}: {}", name_, e.message));
    }
  };
  return s;
}

void HubRangeFile::rethrow_hub_error() const {
  if (hub_error_) throw *hub_error_;
}

}  // namespace memfit::hub
