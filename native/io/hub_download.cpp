#include "hub_download.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "failure.h"

namespace memfit::hub {
namespace fs = std::filesystem;
namespace {

// An ETag names a blob file: one path component, nothing a path could be made of.
bool is_safe_name(const std::string& s) {
  return !s.empty() && s != "." && s != ".." && s.find('/') == std::string::npos && s.find('\0') == std::string::npos;
}

// A repo file's name as a path under the snapshot: relative, no "." or ".." parts (an index's
// shard names are the repo's to choose).
bool is_safe_path(const std::string& file) {
  if (file.empty() || file.front() == '/') return false;
  for (const auto& part : fs::path(file))
    if (part.empty() || part == "." || part == "..") return false;
  return file.find('\0') == std::string::npos;
}

// The .incomplete file, open for the length of one download.
struct PartFile {
  explicit PartFile(std::string where) : path(std::move(where)) {
    fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) fail("create");
  }
  ~PartFile() {
    if (fd >= 0) ::close(fd);
  }
  PartFile(const PartFile&) = delete;
  PartFile& operator=(const PartFile&) = delete;

  std::uint64_t size() const {
    struct stat st {};
    if (::fstat(fd, &st) != 0) fail("read the size of");
    return static_cast<std::uint64_t>(st.st_size);
  }
  // Back to `at` bytes (0: start over), writing from there.
  void cut_to(std::uint64_t at) {
    if (::ftruncate(fd, static_cast<off_t>(at)) != 0 || ::lseek(fd, static_cast<off_t>(at), SEEK_SET) < 0)
      fail("truncate");
  }
  // False with `error` set when the bytes cannot be written (a full disk: ENOSPC).
  bool write(const char* data, std::size_t n) {
    while (n > 0) {
      const ssize_t w = ::write(fd, data, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        error = fmt::format("{}: cannot write ({})", path, std::strerror(w < 0 ? errno : ENOSPC));
        return false;
      }
      data += w;
      n -= static_cast<std::size_t>(w);
    }
    return true;
  }
  void finish() {
    if (::fsync(fd) != 0) fail("fsync");
    const int rc = ::close(fd);
    fd = -1;
    if (rc != 0) fail("close");
  }
  [[noreturn]] void fail(const char* what) const {
    throw Failure{FailureKind::kFile, fmt::format("{}: cannot {} ({})", path, what, std::strerror(errno))};
  }

  std::string path;
  int fd = -1;
  std::string error;
};

}  // namespace

HubDownloader::HubDownloader(HubClient& client, HubCache cache, std::string repo, std::string revision,
                             DownloadEvents events)
    : client_(client), cache_(std::move(cache)), repo_(std::move(repo)), revision_(std::move(revision)),
      events_(std::move(events)), offline_(client.options().offline) {
  if (is_commit_hash(revision_)) commit_ = revision_;
  if (offline_) offline_reason_ = "HF_HUB_OFFLINE is set";
}

std::string HubDownloader::folder() const { return cache_.snapshot(commit_.value_or(revision_)); }

std::optional<std::string> HubDownloader::from_cache(const std::string& file) {
  if (!commit_) commit_ = cache_.commit_of(revision_);
  if (!commit_ || !cache_.has_pointer(*commit_, file)) return std::nullopt;
  return cache_.pointer(*commit_, file);
}

std::optional<std::string> HubDownloader::fetch(const std::string& file) {
  if (!is_safe_path(file))
    throw Failure{FailureKind::kInvalidInput,
                  fmt::format("`{}`: '{}' is not a file name inside the repo", repo_, file)};
  if (offline_) return from_cache(file);
  // A commit's files never change: what its snapshot holds (or knows absent) needs no request.
  if (commit_ && cache_.has_pointer(*commit_, file)) return cache_.pointer(*commit_, file);
  if (commit_ && cache_.known_missing(*commit_, file)) return std::nullopt;
  HubClient::FileMetadata meta;
  try {
    meta = client_.file_metadata(repo_, file, commit_.value_or(revision_));
  } catch (const HubError& e) {
    if (e.kind == HubErrorKind::kEntryNotFound) {
      if (is_commit_hash(e.commit)) {
        cache_.mark_missing(e.commit, file);
        if (!commit_) cache_.set_ref(revision_, e.commit), commit_ = e.commit;
      }
      return std::nullopt;
    }
    if (e.kind == HubErrorKind::kRevisionNotFound) throw e.failure();
    // Gated, not found, unreachable, a server error: the cache, as huggingface_hub falls back to
    // it; when the Hub cannot be reached at all, the rest of the run asks only the cache too.
    if (e.kind == HubErrorKind::kNetwork) offline_ = true, offline_reason_ = e.message;
    if (auto hit = from_cache(file)) {
      if (events_.warn) events_.warn(fmt::format("{}; using {} of `{}` from the cache", e.message, file, repo_));
      return hit;
    }
    if (offline_) return std::nullopt;  // the caller names what the cache lacks, and why
    throw e.failure();
  }
  const std::string what = fmt::format("fetching {} of `{}`", file, repo_);
  if (!is_commit_hash(meta.commit))
    throw Failure{FailureKind::kNetwork,
                  fmt::format("{}: the answer has no X-Repo-Commit header (got '{}'): {} does not answer as the "
                              "Hugging Face Hub does (a proxy in between?)", what, meta.commit,
                              client_.options().endpoint)};
  if (!is_safe_name(meta.etag))
    throw Failure{FailureKind::kNetwork, fmt::format("{}: the answer has no usable ETag (got '{}')", what, meta.etag)};
  if (!meta.size)
    throw Failure{FailureKind::kNetwork, fmt::format("{}: the answer has no Content-Length or X-Linked-Size", what)};
  if (!commit_) {
    commit_ = meta.commit;
    cache_.set_ref(revision_, meta.commit);
  }
  if (cache_.has_pointer(meta.commit, file)) return cache_.pointer(meta.commit, file);
  std::error_code ec;
  if (!fs::is_regular_file(cache_.blob(meta.etag), ec)) {
    HubCache::BlobLock lock(cache_.lock_path(meta.etag));
    if (!fs::is_regular_file(cache_.blob(meta.etag), ec)) download_blob(file, meta);  // not done meanwhile
  }
  cache_.link(meta.commit, file, meta.etag);
  return cache_.pointer(meta.commit, file);
}

void HubDownloader::download_blob(const std::string& file, const HubClient::FileMetadata& meta) {
  const std::string blob = cache_.blob(meta.etag);
  std::error_code ec;
  fs::create_directories(fs::path(blob).parent_path(), ec);
  if (ec)
    throw Failure{FailureKind::kFile, fmt::format("{}: cannot create the folder ({})",
                                                  fs::path(blob).parent_path().string(), ec.message())};
  PartFile part(blob + ".incomplete");
  const std::uint64_t size = *meta.size;
  std::uint64_t at = part.size();
  if (at >= size) at = 0;  // nothing left to resume, or not this file: start over
  part.cut_to(at);
  const std::uint64_t resumed_from = at;
  if (events_.begin) events_.begin(file, size, resumed_from);
  HubClient::StreamSink sink;
  sink.start = [&](std::uint64_t first) {
    if (first == at) return true;
    if (first != 0) {
      part.error = fmt::format("fetching {} of `{}`: asked for bytes from {}, the server sent them from {}", file,
                               repo_, at, first);
      return false;
    }
    part.cut_to(at = 0);  // the server ignored the resume and sends the whole file
    return true;
  };
  sink.write = [&](const char* data, std::size_t n) {
    if (!part.write(data, n)) return false;
    at += n;
    if (events_.progress) events_.progress(at, size);
    return true;
  };
  HubClient::StreamResult r;
  try {
    r = client_.stream_file(meta.location, at, sink, fmt::format("downloading {} of `{}`", file, repo_), repo_);
  } catch (const HubError& e) {
    if (events_.end) events_.end();
    throw e.failure();
  }
  if (events_.end) events_.end();
  if (!part.error.empty())
    throw Failure{FailureKind::kFile, fmt::format("downloading {} of `{}`: {}; the {} bytes written are kept to "
                                                  "resume (delete the file to free the space)", file, repo_,
                                                  part.error, at)};
  if (!r.error.empty())
    throw Failure{FailureKind::kNetwork,
                  fmt::format("downloading {} of `{}`: the transfer stopped after {} of {} bytes ({}); they are kept "
                              "in {} and the next run resumes from there", file, repo_, at, size, r.error, part.path)};
  if (at != size) {
    fs::remove(part.path, ec);
    throw Failure{FailureKind::kNetwork,
                  fmt::format("downloading {} of `{}`: size mismatch: the Hub said {} bytes, the download has {}; "
                              "it was discarded", file, repo_, size, at)};
  }
  part.finish();
  if (::rename(part.path.c_str(), blob.c_str()) != 0)
    throw Failure{FailureKind::kFile, fmt::format("{}: cannot rename to {} ({})", part.path, blob, std::strerror(errno))};
}

}  // namespace memfit::hub
