#include "file_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "failure.h"

namespace memfit::io {

FileReader::FileReader(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw Failure{FailureKind::kFile, fmt::format("{}: cannot open ({})", path_, std::strerror(errno))};
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    throw Failure{FailureKind::kFile, fmt::format("{}: {}", path_, err ? std::strerror(err) : "not a regular file")};
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
}

FileReader::~FileReader() {
  if (fd_ >= 0) ::close(fd_);
}

void FileReader::read_into(std::uint64_t offset, std::uint64_t length, char* out) const {
  if (offset > size_ || length > size_ - offset)
    throw Failure{FailureKind::kInvalidInput, fmt::format("{}: bytes {}..{} lie past the end of the file ({} bytes)",
                                                  path_, offset, offset + length, size_)};
  // At most 1 MiB per call: the kernel pipelines its readahead behind reads of about this size,
  // while one huge pread is filled synchronously (measurements: docs/history.md).
  constexpr std::uint64_t kChunk = std::uint64_t{1} << 20;
  std::uint64_t done = 0;
  while (done < length) {
    const ssize_t n = ::pread(fd_, out + done, static_cast<std::size_t>(std::min(length - done, kChunk)),
                              static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw Failure{FailureKind::kFile, fmt::format("{}: read error at offset {} ({})", path_, offset + done,
                                            n < 0 ? std::strerror(errno) : "unexpected end of file")};
    done += static_cast<std::uint64_t>(n);
  }
}

void FileReader::advise_sequential() const { ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL); }

void FileReader::drop_cached(std::uint64_t offset, std::uint64_t length) const {
  ::posix_fadvise(fd_, static_cast<off_t>(offset), static_cast<off_t>(length), POSIX_FADV_DONTNEED);
}

void FileReader::read(std::uint64_t offset, std::uint64_t length, std::string& out) const {
  if (offset > size_ || length > size_ - offset) read_into(offset, length, nullptr);  // throws
  out.resize(static_cast<std::size_t>(length));
  read_into(offset, length, out.data());
}

zip::ByteSource file_byte_source(std::shared_ptr<FileReader> reader) {
  zip::ByteSource s;
  s.name = reader->path();
  s.size = reader->size();
  s.read = [reader](std::uint64_t offset, std::uint64_t length) -> Result<std::string> {
    try {
      std::string out;
      reader->read(offset, length, out);
      return out;
    } catch (const Failure& e) {
      return Error(ErrorCode::kZipReadFailed, e.message);
    }
  };
  return s;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Failure{FailureKind::kFile, fmt::format("{}: cannot open file", path)};
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw Failure{FailureKind::kFile, fmt::format("{}: read error", path)};
  return ss.str();
}

}  // namespace memfit::io
