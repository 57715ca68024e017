// native/io/hub_cache.h — the Hugging Face cache on disk, the layout huggingface_hub writes and
// transformers reads, so a model either one downloaded is the other's too (docs/hub-downloads.md):
//
//   <root>/models--ORG--NAME/
//     blobs/<etag>                  the file's bytes, named by its ETag (git sha1, or sha256 for LFS)
//     blobs/<etag>.incomplete       a download in progress (resumed from its size)
//     snapshots/<commit>/<file>     relative symlinks to ../../blobs/<etag>
//     refs/<revision>               the commit a branch or tag last resolved to
//     .no_exist/<commit>/<file>     empty: the repo has no such file at that commit
//   <root>/.locks/models--ORG--NAME/<etag>.lock   flock()ed while the blob is written
//
// Its root is HubOptions::hf_cache (hub_client.h). Files only: no network here. Errors throw Failure(kFile) naming the path and errno's text.
#pragma once

#include <optional>
#include <string>

namespace memfit::hub {

// True for a full commit hash (40 lower-case hex digits): a revision that names one commit.
bool is_commit_hash(const std::string& revision);

class HubCache {
 public:
  HubCache(std::string root, const std::string& repo);

  const std::string& root() const { return root_; }
  const std::string& repo_folder() const { return folder_; }  // <root>/models--ORG--NAME

  // The commit `revision` names: itself when it is a commit hash, else refs/<revision>.
  std::optional<std::string> commit_of(const std::string& revision) const;
  // Records refs/<revision> = commit (nothing for a commit hash, nor when it already says so).
  void set_ref(const std::string& revision, const std::string& commit) const;

  std::string snapshot(const std::string& commit) const;  // snapshots/<commit>
  std::string pointer(const std::string& commit, const std::string& file) const;
  std::string blob(const std::string& etag) const;
  bool has_pointer(const std::string& commit, const std::string& file) const;  // and its blob
  bool known_missing(const std::string& commit, const std::string& file) const;
  // Best effort, as huggingface_hub: a cache one cannot write still serves what it has.
  void mark_missing(const std::string& commit, const std::string& file) const;
  // snapshots/<commit>/<file> → the blob, a relative symlink (replacing what was there).
  void link(const std::string& commit, const std::string& file, const std::string& etag) const;

  // An exclusive flock() on .locks/models--ORG--NAME/<etag>.lock for its lifetime: the lock file
  // huggingface_hub's FileLock takes, so memfit and Python never write one blob at once.
  class BlobLock {
   public:
    explicit BlobLock(const std::string& path);
    ~BlobLock();
    BlobLock(const BlobLock&) = delete;
    BlobLock& operator=(const BlobLock&) = delete;

   private:
    int fd_ = -1;
  };
  std::string lock_path(const std::string& etag) const;

 private:
  std::string root_, folder_, locks_;
};

}  // namespace memfit::hub
