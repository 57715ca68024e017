#include "mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "failure.h"

namespace memfit::io {
namespace {

[[noreturn]] void raise_errno(const std::string& path, const char* what, int err) {
  throw Failure{FailureKind::kFile, fmt::format("{}: cannot {} ({})", path, what, std::strerror(err))};
}

// madvise needs a page-aligned start: widen the range down to its page.
void advise(void* base, std::uint64_t size, std::uint64_t offset, std::uint64_t length, int advice) {
  if (!base || offset >= size || length == 0) return;
  const auto page = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  const std::uint64_t start = offset / page * page;
  const std::uint64_t end = std::min(size, offset + std::min(length, size - offset));
  (void)madvise(static_cast<char*>(base) + start, static_cast<std::size_t>(end - start), advice);
}

}  // namespace

MappedFile::MappedFile(std::string path) : path_(std::move(path)) {
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) raise_errno(path_, "open", errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    raise_errno(path_, "stat", err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Failure{FailureKind::kFile, fmt::format("{}: not a regular file; only files can be mapped", path_)};
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
  if (size_ > 0) {
    if (size_ > static_cast<std::uint64_t>(SIZE_MAX)) {
      ::close(fd);
      throw Failure{FailureKind::kFile, fmt::format("{}: {} bytes do not fit in the address space", path_, size_)};
    }
    // Private + writable: in-place writes (torch ops on from_blob views) stay in our copy-on-write
    // pages and never reach the file; a read-only mapping would make them segfault.
    void* p = ::mmap(nullptr, static_cast<std::size_t>(size_), PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      raise_errno(path_, fmt::format("map {} bytes", size_).c_str(), err);
    }
    base_ = p;
  }
  ::close(fd);  // the mapping keeps the file alive
}

MappedFile::~MappedFile() { release(); }

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)), base_(std::exchange(other.base_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    base_ = std::exchange(other.base_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void MappedFile::release() noexcept {
  if (base_) ::munmap(base_, static_cast<std::size_t>(size_));
  base_ = nullptr;
}

void MappedFile::check_range(std::uint64_t offset, std::uint64_t length, std::string_view what) const {
  if (offset > size_ || length > size_ - offset)
    throw Failure{FailureKind::kInvalidInput,
                   fmt::format("{}: {} at offset {} (+{} bytes) lies past the end of the file ({} bytes)",
                               path_, what, offset, length, size_)};
}

std::string_view MappedFile::bytes(std::uint64_t offset, std::uint64_t length, std::string_view what) const {
  check_range(offset, length, what);
  if (length == 0) return {};
  return {reinterpret_cast<const char*>(data()) + offset, static_cast<std::size_t>(length)};
}

std::uint8_t* MappedFile::at(std::uint64_t offset, std::uint64_t length, std::string_view what) {
  check_range(offset, length, what);
  return base_ ? data() + offset : nullptr;
}

void MappedFile::advise_sequential(std::uint64_t offset, std::uint64_t length) const {
  advise(base_, size_, offset, length, MADV_SEQUENTIAL);
}
void MappedFile::advise_willneed(std::uint64_t offset, std::uint64_t length) const {
  advise(base_, size_, offset, length, MADV_WILLNEED);
}
void MappedFile::advise_dontneed(std::uint64_t offset, std::uint64_t length) const {
  advise(base_, size_, offset, length, MADV_DONTNEED);
}

}  // namespace memfit::io
