// native/io/hub_download.h — files of one Hub repo at one revision, downloaded into the Hugging
// Face cache (hub_cache.h) as huggingface_hub's hf_hub_download does, and read from it offline.
//
// Per file: a HEAD gives the commit, the ETag and the size; the snapshot's link is used when it
// exists, else the blob when it exists, else the blob is streamed to <blob>.incomplete (resumed
// from its size), its size checked, renamed, and linked. The first HEAD pins the commit: later
// files are asked at that commit, and a file already in its snapshot costs no request at all.
// With HF_HUB_OFFLINE (or when the Hub cannot be reached) only the cache answers.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "hub_cache.h"
#include "hub_client.h"

namespace memfit::hub {

// What a download shows: one call to `begin` per file fetched (its size, and the bytes already
// there when it resumes), `progress` as bytes arrive, `end` once it is in place; `warn` for a
// file used from the cache because the Hub could not be asked.
struct DownloadEvents {
  std::function<void(const std::string& file, std::uint64_t size, std::uint64_t resumed_from)> begin;
  std::function<void(std::uint64_t done, std::uint64_t total)> progress;
  std::function<void()> end;
  std::function<void(const std::string& message)> warn;
};

class HubDownloader {
 public:
  // `client`'s endpoint, token and offline flag are used; `revision` is a branch, tag or commit.
  HubDownloader(HubClient& client, HubCache cache, std::string repo, std::string revision,
                DownloadEvents events = {});

  // The file's path in the snapshot, downloaded first when needed; nullopt when the repo has no
  // such file at this revision, or (offline, or the Hub unreachable) when the cache lacks it.
  // Throws Failure: the Hub's kinds (gated, repo or revision not found, network), kFile when the
  // cache cannot be written, kNetwork for a transfer cut short or a size that does not match.
  std::optional<std::string> fetch(const std::string& file);

  bool offline() const { return offline_; }
  // Why only the cache is asked: "HF_HUB_OFFLINE is set", or the error that reached no Hub.
  const std::string& offline_reason() const { return offline_reason_; }
  const std::string& repo() const { return repo_; }
  const std::string& revision() const { return revision_; }
  const HubCache& cache() const { return cache_; }
  // The commit the revision resolved to (after the first fetch), and its snapshot folder.
  const std::optional<std::string>& commit() const { return commit_; }
  std::string folder() const;

 private:
  std::optional<std::string> from_cache(const std::string& file);
  void download_blob(const std::string& file, const HubClient::FileMetadata& meta);

  HubClient& client_;
  HubCache cache_;
  std::string repo_, revision_;
  DownloadEvents events_;
  bool offline_;
  std::string offline_reason_;
  std::optional<std::string> commit_;
};

}  // namespace memfit::hub
