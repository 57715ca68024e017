// native/io/mapped_file.h — a whole file memory-mapped, RAII.
//
// The mapping is MAP_PRIVATE with PROT_READ|PROT_WRITE (../shared/docs/toolchain.md): a tensor
// made with torch::from_blob over it may be written in place (copy-on-write pages) without a
// segfault, and nothing ever reaches the file. Pages are only read when touched, so mapping a
// multi-GB shard costs no RAM up front.
//
// Errors throw Failure (kFile) with the path and errno's text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace memfit::io {

class MappedFile {
 public:
  // Maps all of `path`. An empty file is valid: data() is nullptr and size() 0.
  explicit MappedFile(std::string path);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::string& path() const { return path_; }
  std::uint64_t size() const { return size_; }
  std::uint8_t* data() { return static_cast<std::uint8_t*>(base_); }
  const std::uint8_t* data() const { return static_cast<const std::uint8_t*>(base_); }

  // The bytes [offset, offset + length), checked against the file size (Failure naming the
  // path, the range and the size when it does not fit). `what` names the object in the message.
  std::string_view bytes(std::uint64_t offset, std::uint64_t length,
                         std::string_view what = "range") const;
  // A pointer to `offset`, after the same check; for zero-copy views (torch::from_blob).
  std::uint8_t* at(std::uint64_t offset, std::uint64_t length, std::string_view what = "range");

  // madvise(MADV_SEQUENTIAL / MADV_WILLNEED / MADV_DONTNEED) over a range; best effort (a
  // failure is ignored: it is only a hint). DONTNEED on a private mapping drops our copy-on-write
  // changes too — call it only on ranges nothing wrote to.
  void advise_sequential(std::uint64_t offset, std::uint64_t length) const;
  void advise_willneed(std::uint64_t offset, std::uint64_t length) const;
  void advise_dontneed(std::uint64_t offset, std::uint64_t length) const;

 private:
  void release() noexcept;
  void check_range(std::uint64_t offset, std::uint64_t length, std::string_view what) const;

  std::string path_;
  void* base_ = nullptr;
  std::uint64_t size_ = 0;
};

}  // namespace memfit::io
