// native/io/file_reader.h — positional reads of a local file (pread), for parsers that need only
// some bytes of a large file (zip directories, safetensors headers, tensor copies in bounded
// chunks), and whole small files (configs, indexes, device maps).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "memfit/format/zip_archive.h"

namespace memfit::io {

class FileReader {
 public:
  // Opens `path` read-only; throws Failure(kFile) with errno's text.
  explicit FileReader(std::string path);
  ~FileReader();
  FileReader(const FileReader&) = delete;
  FileReader& operator=(const FileReader&) = delete;

  const std::string& path() const { return path_; }
  std::uint64_t size() const { return size_; }
  // Exactly `length` bytes at `offset` into `out` (resized); throws Failure when the range is
  // outside the file (kInvalidInput) or the read fails (kFile).
  void read(std::uint64_t offset, std::uint64_t length, std::string& out) const;
  void read_into(std::uint64_t offset, std::uint64_t length, char* out) const;

  // posix_fadvise hints; best effort (a failure is ignored). Sequential doubles the kernel's
  // readahead; drop_cached evicts a range from the page cache (benchmarks read from storage).
  void advise_sequential() const;
  void drop_cached(std::uint64_t offset, std::uint64_t length) const;

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

// A zip ByteSource over a file (the reader is shared so the source can outlive the caller's scope).
zip::ByteSource file_byte_source(std::shared_ptr<FileReader> reader);

// Reads a whole local file; throws Failure(kFile) naming the path.
std::string read_file(const std::string& path);

}  // namespace memfit::io
