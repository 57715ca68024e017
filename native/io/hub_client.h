// native/io/hub_client.h — the few Hugging Face Hub calls memfit needs, over libcurl.
//
// Redirects are followed by hand so the token is only ever sent to the Hub's own host (a CDN
// or a mirror on another host never sees it). Responses that succeed are cached under
// ~/.cache/memfit and used when the network is unavailable or HF_HUB_OFFLINE=1.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "failure.h"

namespace memfit::hub {

enum class HubErrorKind { kGated, kRepoNotFound, kEntryNotFound, kRevisionNotFound, kNetwork, kHttp };

struct HubError {
  HubError(HubErrorKind k, std::string text, std::string at_commit = {})
      : kind(k), message(std::move(text)), commit(std::move(at_commit)) {}
  HubErrorKind kind;
  std::string message;
  std::string commit;  // the X-Repo-Commit of the answer, when it had one (a 404 inside a known repo)
  FailureKind failure_kind() const;  // revision not found: entry not found; other HTTP: network
  Failure failure() const { return {failure_kind(), message}; }
};

// The result of `fetch()`, or nullopt when the Hub says the file does not exist (kEntryNotFound);
// every other HubError passes. For "this file, else that one" lookups of optional repo files.
template <typename Fetch>
auto unless_missing(Fetch&& fetch) -> std::optional<decltype(fetch())> {
  try {
    return fetch();
  } catch (const HubError& e) {
    if (e.kind != HubErrorKind::kEntryNotFound) throw;
    return std::nullopt;
  }
}

// Runs a read of Hub files; a HubError becomes a Failure of its kind.
template <typename Fn>
auto hub_read(Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const HubError& e) {
    throw e.failure();
  }
}

struct HubOptions {
  std::string endpoint;   // default: $HF_ENDPOINT or https://huggingface.co
  std::string token;      // default: --token, $HF_TOKEN, ~/.cache/huggingface/token
  std::string revision = "main";
  std::string cache_dir;  // default: $MEMFIT_CACHE or ~/.cache/memfit; "" disables
  // The Hugging Face cache (hub_cache.h), huggingface_hub's order: $HF_HUB_CACHE, else
  // $HUGGINGFACE_HUB_CACHE, else $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub, else
  // ~/.cache/huggingface/hub.
  std::string hf_cache;
  bool offline = false;   // $HF_HUB_OFFLINE=1: only the cache
  long timeout_s = 30;
  static HubOptions from_environment();
};

struct HttpResponse {
  long status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string url;                             // after redirects
  bool truncated = false;  // a 200 to a range from byte 0, kept to the bytes asked (see get())
};

class HubClient {
 public:
  explicit HubClient(HubOptions options);

  // GET {endpoint}/{repo}/resolve/{revision}/{file}; throws HubError.
  std::string fetch_file(const std::string& repo, const std::string& file);
  // GET {endpoint}/api/models/{repo}[/revision/{revision}]; throws HubError.
  std::string fetch_model_info(const std::string& repo);
  // The same with ?blobs=true: each of `siblings` carries its file's `size` (GGUF repos' tables).
  std::string fetch_model_files(const std::string& repo);
  // A ranged GET (bytes=first-last) of a repo file; throws HubError. The body may be shorter
  // than asked when the file ends first; `total` is the file size from Content-Range.
  struct Range {
    std::string body;
    std::optional<std::uint64_t> total;
  };
  // A server that ignores Range answers 200 with the whole file: for a range from byte 0 its
  // first bytes are kept and the transfer stopped there (total from Content-Length); for a range
  // further in it is refused (memfit never reads a checkpoint up to a far range).
  Range fetch_range(const std::string& repo, const std::string& file, std::uint64_t first,
                    std::uint64_t last);
  // The last `n` bytes of a repo file (a suffix range, bytes=-n) and the file size, in one
  // request; throws HubError. A file shorter than `n` comes back whole.
  Range fetch_tail(const std::string& repo, const std::string& file, std::uint64_t n);

  // What the Hub says of a file before it is downloaded (huggingface_hub's get_hf_file_metadata).
  struct FileMetadata {
    std::string commit;                 // X-Repo-Commit: the commit `revision` resolved to
    std::string etag;                   // X-Linked-Etag, else ETag, without W/ and quotes
    std::optional<std::uint64_t> size;  // X-Linked-Size, else Content-Length
    std::string location;               // where to GET it: the CDN the Hub redirects to, or the Hub
  };
  // HEAD {endpoint}/{repo}/resolve/{revision}/{file}, following redirects on the Hub's own origin
  // only (a renamed repo): a redirect elsewhere (an LFS file's CDN) is where the bytes are, and its
  // headers are the Hub's. Throws HubError (a 404 carries the X-Repo-Commit when the repo exists).
  FileMetadata file_metadata(const std::string& repo, const std::string& file,
                             const std::string& revision);

  // Where a streamed body goes, chunk by chunk (a download is never held whole in memory).
  // `start(first)` comes once, before the first chunk: the body's first byte in the file (the
  // offset asked on a 206; 0 when the server sent the whole file). A false from either stops the
  // transfer; the sink keeps its own reason.
  struct StreamSink {
    std::function<bool(std::uint64_t first)> start;
    std::function<bool(const char* data, std::size_t n)> write;
  };
  struct StreamResult {
    std::uint64_t received = 0;                   // body bytes handed to the sink
    std::optional<std::uint64_t> content_length;  // the answer's Content-Length
    bool refused = false;                         // the sink returned false
    std::string error;                            // why the transfer stopped early ("" if it did not)
  };
  // GET `url` (a FileMetadata::location) into `sink`, from byte `from` (Range: bytes=from-) when
  // > 0; the token goes to the Hub's origin only. An HTTP error throws HubError (`what` and `repo`
  // name it); a transfer cut short returns with `error` set, so the caller keeps what it has.
  StreamResult stream_file(const std::string& url, std::uint64_t from, StreamSink& sink,
                           const std::string& what, const std::string& repo);

  const HubOptions& options() const { return options_; }

 private:
  struct Request {
    std::string range;
    std::uint64_t max_body = 0;  // > 0: a success body longer than that is cut off (kHttp)
    bool head = false;
    bool stay_on_hub = false;    // stop at a redirect to another origin and return it
    StreamSink* stream = nullptr;  // success bodies go here instead of HttpResponse::body
  };
  struct Transfer;
  HttpResponse get(const std::string& url, const Request& request, Transfer* transfer = nullptr);
  std::string cached_get(const std::string& url, const std::string& what,
                         const std::string& repo);
  [[noreturn]] void raise_for(const HttpResponse& r, const std::string& what,
                              const std::string& repo);

  HubOptions options_;
  std::string hub_host_;
};

// True when `s` looks like a Hub repo id ("org/name" or "name").
bool looks_like_repo_id(const std::string& s);

}  // namespace memfit::hub
