#include "hub_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "atomic_write.h"
#include "failure.h"

namespace memfit::hub {
namespace fs = std::filesystem;
namespace {

void make_folders(const fs::path& path) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) throw Failure{FailureKind::kFile, fmt::format("{}: cannot create the folder ({})", path.string(), ec.message())};
}

}  // namespace

bool is_commit_hash(const std::string& revision) {
  return revision.size() == 40 && revision.find_first_not_of("0123456789abcdef") == std::string::npos;
}

HubCache::HubCache(std::string root, const std::string& repo) : root_(std::move(root)) {
  // huggingface_hub's repo_folder_name: "models" and the id's parts joined by "--".
  std::string name = "models--" + repo;
  for (std::size_t at = name.find('/', 8); at != std::string::npos; at = name.find('/', at))
    name.replace(at, 1, "--");
  folder_ = (fs::path(root_) / name).string();
  locks_ = (fs::path(root_) / ".locks" / name).string();
}

std::optional<std::string> HubCache::commit_of(const std::string& revision) const {
  if (is_commit_hash(revision)) return revision;
  std::ifstream in(fs::path(folder_) / "refs" / revision);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  std::string commit = ss.str();
  while (!commit.empty() && (commit.back() == '\n' || commit.back() == ' ')) commit.pop_back();
  if (!is_commit_hash(commit)) return std::nullopt;
  return commit;
}

void HubCache::set_ref(const std::string& revision, const std::string& commit) const {
  if (revision == commit || commit_of(revision) == commit) return;
  const fs::path ref = fs::path(folder_) / "refs" / revision;
  make_folders(ref.parent_path());
  io::write_file_atomically(ref.string(), commit);  // no newline: huggingface_hub writes none
}

std::string HubCache::snapshot(const std::string& commit) const {
  return (fs::path(folder_) / "snapshots" / commit).string();
}

std::string HubCache::pointer(const std::string& commit, const std::string& file) const {
  return (fs::path(snapshot(commit)) / file).string();
}

std::string HubCache::blob(const std::string& etag) const { return (fs::path(folder_) / "blobs" / etag).string(); }

bool HubCache::has_pointer(const std::string& commit, const std::string& file) const {
  std::error_code ec;
  return fs::is_regular_file(pointer(commit, file), ec);  // follows the link: a dangling one is no file
}

bool HubCache::known_missing(const std::string& commit, const std::string& file) const {
  std::error_code ec;
  return fs::exists(fs::path(folder_) / ".no_exist" / commit / file, ec);
}

void HubCache::mark_missing(const std::string& commit, const std::string& file) const {
  const fs::path marker = fs::path(folder_) / ".no_exist" / commit / file;
  std::error_code ec;
  fs::create_directories(marker.parent_path(), ec);
  std::ofstream touch(marker, std::ios::app);
}

void HubCache::link(const std::string& commit, const std::string& file, const std::string& etag) const {
  const fs::path where = pointer(commit, file);
  make_folders(where.parent_path());
  const fs::path target = fs::relative(blob(etag), where.parent_path());
  std::error_code ec;
  fs::remove(where, ec);
  fs::create_symlink(target, where, ec);
  if (ec && !(fs::is_symlink(where) && fs::equivalent(where, blob(etag))))
    throw Failure{FailureKind::kFile, fmt::format("{}: cannot create the link to {} ({})", where.string(),
                                                  target.string(), ec.message())};
}

std::string HubCache::lock_path(const std::string& etag) const { return (fs::path(locks_) / (etag + ".lock")).string(); }

HubCache::BlobLock::BlobLock(const std::string& path) {
  make_folders(fs::path(path).parent_path());
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw Failure{FailureKind::kFile, fmt::format("{}: cannot open the lock file ({})", path, std::strerror(errno))};
  while (::flock(fd_, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    const int err = errno;
    ::close(fd_);
    throw Failure{FailureKind::kFile, fmt::format("{}: cannot lock ({})", path, std::strerror(err))};
  }
}

HubCache::BlobLock::~BlobLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

}  // namespace memfit::hub
