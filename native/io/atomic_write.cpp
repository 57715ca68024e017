#include "atomic_write.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "failure.h"

namespace memfit::io {
namespace fs = std::filesystem;
namespace {

[[noreturn]] void raise_errno(const std::string& path, const char* what) {
  throw Failure{FailureKind::kFile, fmt::format("{}: cannot {} ({})", path, what, std::strerror(errno))};
}

void fsync_folder(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) raise_errno(path, "open for fsync");
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  errno = err;
  if (rc != 0) raise_errno(path, "fsync");
}

// After a rename: flushes the folder's entry for it. Best effort — the output is already complete
// and in place, and a folder one may write in but not read cannot be opened for this.
void sync_parent_of(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  const int fd = ::open(parent.empty() ? "." : parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

std::string make_temp_dir(const fs::path& folder, const char* tag) {
  std::string tmpl = folder.string() + tag + "XXXXXX";
  if (!::mkdtemp(tmpl.data())) raise_errno(tmpl, "create a temporary folder");
  return tmpl;
}

// Puts `tmp` in place of `folder`: an atomic exchange when the kernel has one, else old aside,
// new in, old removed (a crash between the two renames leaves no `folder`, never a partial one).
void install(const std::string& tmp, const std::string& folder) {
  std::error_code ec;
  if (!fs::exists(folder, ec)) {
    if (::rename(tmp.c_str(), folder.c_str()) != 0) raise_errno(folder, "rename the new folder into place");
    return;
  }
#ifdef RENAME_EXCHANGE
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, folder.c_str(), RENAME_EXCHANGE) == 0) {
    fs::remove_all(tmp, ec);  // now the old folder
    return;
  }
#endif
  const std::string old = make_temp_dir(fs::path(folder), ".old-");
  fs::remove(old, ec);
  if (::rename(folder.c_str(), old.c_str()) != 0) raise_errno(folder, "move the old folder aside");
  if (::rename(tmp.c_str(), folder.c_str()) != 0) raise_errno(folder, "rename the new folder into place");
  fs::remove_all(old, ec);
}

}  // namespace

OutputFile::OutputFile(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0) raise_errno(path_, "create");
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void OutputFile::write(const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd_, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) raise_errno(path_, "write");
    p += n;
    size -= static_cast<std::size_t>(n);
    written_ += static_cast<std::uint64_t>(n);
  }
}

void OutputFile::finish(bool sync) {
  if (sync && ::fsync(fd_) != 0) raise_errno(path_, "fsync");
  const int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) raise_errno(path_, "close");
}

AtomicFolder::AtomicFolder(const std::string& folder) {
  std::error_code ec;
  const fs::path target = fs::absolute(folder, ec);
  if (!target.parent_path().empty()) fs::create_directories(target.parent_path(), ec);
  target_ = target.string();
  temp_ = make_temp_dir(target, ".tmp-");
}

AtomicFolder::~AtomicFolder() {
  std::error_code ec;
  if (!temp_.empty()) fs::remove_all(temp_, ec);
}

void AtomicFolder::commit(bool sync) {
  if (sync) fsync_folder(temp_);
  install(temp_, target_);
  temp_.clear();
  if (sync) sync_parent_of(target_);
}

void write_file_atomically(const std::string& path, std::string_view bytes) {
  std::string tmp = path + ".tmp-XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw Failure{FailureKind::kFile, fmt::format("{}: cannot write", path)};
  ::close(fd);
  std::error_code ec;
  try {
    fs::remove(tmp, ec);  // a fresh name from mkstemp; OutputFile creates it again exclusively
    OutputFile out(tmp);
    out.write(bytes.data(), bytes.size());
    out.finish();
  } catch (const Failure&) {
    fs::remove(tmp, ec);
    throw Failure{FailureKind::kFile, fmt::format("{}: write failed", path)};
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw Failure{FailureKind::kFile, fmt::format("{}: cannot write ({})", path, ec.message())};
  }
  sync_parent_of(path);
}

}  // namespace memfit::io
