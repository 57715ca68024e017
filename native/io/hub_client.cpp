#include "hub_client.h"

#include "curl_library.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <fmt/format.h>


namespace memfit::hub {
namespace fs = std::filesystem;
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  std::size_t i = 0;
  while (i < s.size() && s[i] == ' ') ++i;
  return s.substr(i);
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// scheme://host[:port] of a URL ("" when it has none).
std::string origin_of(const std::string& url) {
  const auto scheme = url.find("://");
  if (scheme == std::string::npos) return {};
  const auto end = url.find('/', scheme + 3);
  return lower(url.substr(0, end));
}

// "bytes 0-99/12345" → 0 (nullopt when there is no first byte position).
std::optional<std::uint64_t> parse_first(const std::string& content_range) {
  const auto space = content_range.find(' ');
  const auto dash = content_range.find('-');
  if (space == std::string::npos || dash == std::string::npos || dash <= space + 1) return std::nullopt;
  try {
    return std::stoull(content_range.substr(space + 1, dash - space - 1));
  } catch (...) {
    return std::nullopt;
  }
}

// "bytes 0-99/12345" or "bytes */12345" → 12345.
std::optional<std::uint64_t> parse_total(const std::string& content_range) {
  const auto slash = content_range.rfind('/');
  if (slash == std::string::npos || slash + 1 >= content_range.size() ||
      content_range[slash + 1] == '*')
    return std::nullopt;
  try {
    return std::stoull(content_range.substr(slash + 1));
  } catch (...) {
    return std::nullopt;
  }
}

// The cap applies to a success body only: redirects and errors carry small texts of their own.
// A streamed success body goes to the caller's sink instead of the string.
struct BodySink {
  const CurlLibrary* lib;
  CURL* curl;
  HttpResponse* response;
  std::uint64_t max;  // 0: no cap
  HubClient::StreamSink* stream = nullptr;
  bool cut = false;
  bool started = false;
  bool refused = false;
  std::uint64_t streamed = 0;
};

std::size_t write_body(char* data, std::size_t size, std::size_t n, void* user) {
  auto* sink = static_cast<BodySink*>(user);
  long status = 0;
  sink->lib->easy_getinfo(sink->curl, CURLINFO_RESPONSE_CODE, &status);
  std::string& body = sink->response->body;
  const bool success = status >= 200 && status < 300;
  if (sink->stream && success) {
    if (!sink->started) {
      sink->started = true;
      const auto range = sink->response->headers.find("content-range");
      const std::uint64_t first =
          status == 206 && range != sink->response->headers.end() ? parse_first(range->second).value_or(0) : 0;
      if (!sink->stream->start(first)) return sink->refused = true, 0;
    }
    if (!sink->stream->write(data, size * n)) return sink->refused = true, 0;
    sink->streamed += size * n;
    return size * n;
  }
  if (sink->max && success && body.size() + size * n > sink->max) {
    body.append(data, sink->max - body.size());  // exactly the first `max` bytes
    sink->cut = true;  // returning less than given makes libcurl abort the transfer
    return 0;
  }
  body.append(data, size * n);
  return size * n;
}

std::size_t write_header(char* data, std::size_t size, std::size_t n, void* user) {
  std::string line(data, size * n);
  auto* headers = static_cast<std::map<std::string, std::string>*>(user);
  if (line.rfind("HTTP/", 0) == 0) headers->clear();  // a new response (e.g. 100 Continue)
  const auto colon = line.find(':');
  if (colon != std::string::npos)
    (*headers)[lower(line.substr(0, colon))] = trim(line.substr(colon + 1));
  return size * n;
}

std::string cache_key(const std::string& url) {
  std::string out;
  for (char c : url) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-') ? c : '_';
  return out;
}

}  // namespace

FailureKind HubError::failure_kind() const {
  switch (kind) {
    case HubErrorKind::kGated: return FailureKind::kGated;
    case HubErrorKind::kRepoNotFound: return FailureKind::kRepoNotFound;
    case HubErrorKind::kEntryNotFound:
    case HubErrorKind::kRevisionNotFound: return FailureKind::kEntryNotFound;
    case HubErrorKind::kNetwork:
    case HubErrorKind::kHttp: return FailureKind::kNetwork;
  }
  return FailureKind::kNetwork;
}

HubOptions HubOptions::from_environment() {
  HubOptions o;
  o.endpoint = env("HF_ENDPOINT");
  if (o.endpoint.empty()) o.endpoint = "https://huggingface.co";
  while (!o.endpoint.empty() && o.endpoint.back() == '/') o.endpoint.pop_back();
  o.token = env("HF_TOKEN");
  if (o.token.empty()) o.token = env("HUGGING_FACE_HUB_TOKEN");
  const std::string home = env("HOME");
  if (o.token.empty()) {
    std::string path = env("HF_TOKEN_PATH");
    if (path.empty() && !env("HF_HOME").empty()) path = env("HF_HOME") + "/token";
    if (path.empty() && !home.empty()) path = home + "/.cache/huggingface/token";
    std::ifstream in(path);
    if (in) {
      std::stringstream ss;
      ss << in.rdbuf();
      o.token = trim(ss.str());
    }
  }
  o.hf_cache = !env("HF_HUB_CACHE").empty()            ? env("HF_HUB_CACHE")
               : !env("HUGGINGFACE_HUB_CACHE").empty() ? env("HUGGINGFACE_HUB_CACHE")
               : !env("HF_HOME").empty()               ? env("HF_HOME") + "/hub"
               : !env("XDG_CACHE_HOME").empty()        ? env("XDG_CACHE_HOME") + "/huggingface/hub"
                                                       : home + "/.cache/huggingface/hub";
  o.cache_dir = env("MEMFIT_CACHE");
  if (o.cache_dir.empty() && !home.empty()) o.cache_dir = home + "/.cache/memfit";
  const std::string off = env("HF_HUB_OFFLINE");
  o.offline = off == "1" || lower(off) == "true";
  return o;
}

bool looks_like_repo_id(const std::string& s) {
  static const std::regex re(R"(^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$)");
  return s.size() <= 200 && std::regex_match(s, re) && s.find("..") == std::string::npos;
}

HubClient::HubClient(HubOptions options) : options_(std::move(options)) {
  hub_host_ = origin_of(options_.endpoint);
}

struct HubClient::Transfer {
  std::uint64_t streamed = 0;
  bool refused = false;
  std::string error;  // a streamed transfer that stopped early: libcurl's reason
};

HttpResponse HubClient::get(const std::string& start_url, const Request& request, Transfer* transfer) {
  HttpResponse r;
  std::string url = start_url;
  std::string why;
  const CurlLibrary* lib = curl_library(&why);  // loaded here, by the first request only
  if (!lib) throw HubError{HubErrorKind::kNetwork, why};
  for (int hop = 0; hop < 10; ++hop) {
    CURL* curl = lib->easy_init();
    if (!curl) throw HubError{HubErrorKind::kNetwork, "could not initialise libcurl"};
    r.body.clear();
    r.headers.clear();
    BodySink sink{lib, curl, &r, request.max_body, request.stream};
    struct curl_slist* headers = nullptr;
    headers = lib->slist_append(headers, "User-Agent: memfit/0.1");
    // The token goes to the Hub's own origin only — never to a redirect target elsewhere.
    if (!options_.token.empty() && origin_of(url) == hub_host_)
      headers = lib->slist_append(headers, ("Authorization: Bearer " + options_.token).c_str());
    lib->easy_setopt(curl, CURLOPT_URL, url.c_str());
    lib->easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    lib->easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
    lib->easy_setopt(curl, CURLOPT_WRITEFUNCTION, &write_body);
    lib->easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
    lib->easy_setopt(curl, CURLOPT_HEADERFUNCTION, &write_header);
    lib->easy_setopt(curl, CURLOPT_HEADERDATA, &r.headers);
    // A download takes as long as it takes; a stalled one (under 1 byte/s for the timeout) stops.
    if (request.stream) {
      lib->easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
      lib->easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, options_.timeout_s);
    } else {
      lib->easy_setopt(curl, CURLOPT_TIMEOUT, options_.timeout_s);
    }
    lib->easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 10L);
    lib->easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    lib->easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    if (request.head) lib->easy_setopt(curl, CURLOPT_NOBODY, 1L);
    if (!request.range.empty()) lib->easy_setopt(curl, CURLOPT_RANGE, request.range.c_str());
    const CURLcode rc = lib->easy_perform(curl);
    lib->easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r.status);
    lib->slist_free_all(headers);
    lib->easy_cleanup(curl);
    // A 200 to a range from byte 0 is the file from its start: its first max_body bytes are the
    // range asked, kept, and the rest is never read (the page does the same). Any other cut is
    // refused: what was asked lies further in, and memfit will not read up to it.
    r.truncated = sink.cut && r.status == 200 && request.range.rfind("0-", 0) == 0;
    if (sink.cut && !r.truncated)
      throw HubError{HubErrorKind::kHttp,
                     fmt::format("{} sent more than the {} bytes asked (HTTP {}{}); memfit reads "
                                 "checkpoints by range and never downloads them whole",
                                 origin_of(url), request.max_body, r.status,
                                 r.status == 200 ? ": the server ignored the Range request" : "")};
    r.url = url;
    if (sink.started && transfer) {  // a streamed body began: what came is the caller's to keep
      transfer->streamed = sink.streamed;
      transfer->refused = sink.refused;
      if (rc != CURLE_OK) transfer->error = lib->easy_strerror(rc);
      return r;
    }
    if (rc != CURLE_OK && !r.truncated)
      throw HubError{HubErrorKind::kNetwork,
                     fmt::format("cannot reach {}: {}", origin_of(url), lib->easy_strerror(rc))};
    if (r.status < 300 || r.status >= 400 || !r.headers.count("location")) return r;
    const std::string& loc = r.headers["location"];
    std::string next;
    if (loc.rfind("http://", 0) == 0 || loc.rfind("https://", 0) == 0) next = loc;
    else if (!loc.empty() && loc[0] == '/') next = origin_of(url) + loc;
    else next = url.substr(0, url.rfind('/') + 1) + loc;
    if (request.stay_on_hub && origin_of(next) != hub_host_) {
      r.headers["location"] = next;  // absolute: where the bytes are
      return r;
    }
    url = next;
  }
  throw HubError{HubErrorKind::kNetwork, fmt::format("too many redirects for {}", start_url)};
}

void HubClient::raise_for(const HttpResponse& r, const std::string& what, const std::string& repo) {
  auto code_it = r.headers.find("x-error-code");
  const std::string code = code_it == r.headers.end() ? "" : code_it->second;
  if (code == "GatedRepo" || (r.status == 403 && code.empty()))
    throw HubError{HubErrorKind::kGated,
                   fmt::format("{}: access to model `{}` is restricted (gated repo, HTTP {}). "
                               "Accept its conditions on the Hub and pass a token with access "
                               "(--token, HF_TOKEN or `huggingface-cli login`)",
                               what, repo, r.status)};
  if (code == "RepoNotFound" || (r.status == 401 && code.empty()) ||
      (r.status == 404 && code.empty() && what.find("api/models") != std::string::npos))
    throw HubError{HubErrorKind::kRepoNotFound,
                   fmt::format("model `{}` does not exist on {} (HTTP {}). If it is private, "
                               "pass a token with access (--token or HF_TOKEN)",
                               repo, options_.endpoint, r.status)};
  if (code == "RevisionNotFound")
    throw HubError{HubErrorKind::kRevisionNotFound,
                   fmt::format("model `{}` has no revision `{}` (HTTP {})", repo,
                               options_.revision, r.status)};
  if (code == "EntryNotFound" || r.status == 404)
    throw HubError{HubErrorKind::kEntryNotFound,
                   fmt::format("{}: model `{}` has no such file at revision `{}` (HTTP {})", what,
                               repo, options_.revision, r.status)};
  throw HubError{HubErrorKind::kHttp,
                 fmt::format("{}: unexpected HTTP {} from {}", what, r.status, origin_of(r.url))};
}

std::string HubClient::cached_get(const std::string& url, const std::string& what,
                                  const std::string& repo) {
  const fs::path cache = options_.cache_dir.empty()
                             ? fs::path()
                             : fs::path(options_.cache_dir) / cache_key(url);
  auto read_cache = [&]() -> std::optional<std::string> {
    if (cache.empty()) return std::nullopt;
    std::ifstream in(cache, std::ios::binary);
    if (!in) return std::nullopt;
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  if (options_.offline) {
    if (auto hit = read_cache()) return *hit;
    throw HubError{HubErrorKind::kNetwork,
                   fmt::format("{}: HF_HUB_OFFLINE is set and {} is not in the cache ({})", what,
                               url, options_.cache_dir)};
  }
  HttpResponse r;
  try {
    r = get(url, Request());
  } catch (const HubError& e) {
    if (auto hit = read_cache()) return *hit;  // offline fallback: the last good copy
    throw;
  }
  if (r.status != 200) raise_for(r, what, repo);
  if (!cache.empty()) {
    // Write to a temp file then rename, so a crash never leaves a half-written cache entry.
    std::error_code ec;
    fs::create_directories(cache.parent_path(), ec);
    const fs::path tmp = cache.string() + ".tmp";
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out << r.body;
    }
    fs::rename(tmp, cache, ec);
    if (ec) fs::remove(tmp, ec);
  }
  return r.body;
}

std::string HubClient::fetch_file(const std::string& repo, const std::string& file) {
  const std::string url =
      fmt::format("{}/{}/resolve/{}/{}", options_.endpoint, repo, options_.revision, file);
  return cached_get(url, fmt::format("fetching {} of `{}`", file, repo), repo);
}

std::string HubClient::fetch_model_info(const std::string& repo) {
  std::string url = fmt::format("{}/api/models/{}", options_.endpoint, repo);
  if (options_.revision != "main") url += "/revision/" + options_.revision;
  return cached_get(url, fmt::format("fetching api/models/{}", repo), repo);
}

std::string HubClient::fetch_model_files(const std::string& repo) {
  std::string url = fmt::format("{}/api/models/{}", options_.endpoint, repo);
  if (options_.revision != "main") url += "/revision/" + options_.revision;
  return cached_get(url + "?blobs=true", fmt::format("fetching api/models/{}", repo), repo);
}

namespace {
std::optional<std::uint64_t> content_length(HttpResponse& r) {
  const std::string& v = r.headers["content-length"];
  if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos || v.size() > 19) return std::nullopt;
  return std::stoull(v);
}

// 206, or a 200 that carries a Content-Range: the range asked with the wrong status (cpp-httplib
// answers so when a handler sets 200 itself), read as the 206 it is. A plain 200 is the whole file.
bool is_partial(HttpResponse& r) { return r.status == 206 || !r.headers["content-range"].empty(); }
}  // namespace

HubClient::Range HubClient::fetch_range(const std::string& repo, const std::string& file,
                                        std::uint64_t first, std::uint64_t last) {
  const std::string url =
      fmt::format("{}/{}/resolve/{}/{}", options_.endpoint, repo, options_.revision, file);
  HttpResponse r = get(url, {fmt::format("{}-{}", first, last), last - first + 1});
  Range out;
  if (r.status == 416) {  // asked past the end: the file is shorter than `first`
    out.total = parse_total(r.headers["content-range"]);
    return out;
  }
  if (r.status != 206 && r.status != 200) raise_for(r, "reading " + file, repo);
  if (!is_partial(r)) {  // the server ignored Range: the whole file, or (truncated) its start
    out.total = r.truncated ? content_length(r) : std::optional<std::uint64_t>(r.body.size());
    out.body = first < r.body.size() ? r.body.substr(first, last - first + 1) : std::string();
    return out;
  }
  const std::string& content_range = r.headers["content-range"];
  out.total = parse_total(content_range);
  out.body = std::move(r.body);
  if (out.body.size() > last - first + 1)
    throw HubError{HubErrorKind::kHttp,
                   fmt::format("reading {}: asked for {} bytes, the server sent {}", file,
                               last - first + 1, out.body.size())};
  if (parse_first(content_range) != std::optional<std::uint64_t>(first))
    throw HubError{HubErrorKind::kHttp,
                   fmt::format("reading {}: asked for bytes from {}, the server sent Content-Range '{}'",
                               file, first, content_range)};
  return out;
}

HubClient::Range HubClient::fetch_tail(const std::string& repo, const std::string& file,
                                       std::uint64_t n) {
  const std::string url =
      fmt::format("{}/{}/resolve/{}/{}", options_.endpoint, repo, options_.revision, file);
  HttpResponse r = get(url, {fmt::format("-{}", n), n});
  if (r.status != 206 && r.status != 200) raise_for(r, "reading " + file, repo);
  Range out;
  if (!is_partial(r)) {  // the server ignored Range, and the whole file fit in `n` bytes
    out.total = r.body.size();
    out.body = std::move(r.body);
    return out;
  }
  const std::string& content_range = r.headers["content-range"];
  out.total = parse_total(content_range);
  const std::optional<std::uint64_t> first = parse_first(content_range);
  // The body must be the file's last bytes: it starts at total − size, as Content-Range says.
  if (!out.total || !first || r.body.size() > *out.total || *first != *out.total - r.body.size())
    throw HubError{HubErrorKind::kHttp,
                   fmt::format("reading the last {} bytes of {}: the server answered {} bytes with "
                               "Content-Range '{}'", n, file, r.body.size(), content_range)};
  out.body = std::move(r.body);
  return out;
}

}  // namespace memfit::hub

namespace memfit::hub {
namespace {

// huggingface_hub's _normalize_etag: W/"x" or "x" → x. The Hub sends the second form; a weak
// one from a proxy names the same blob once its prefix is gone.
std::string normalize_etag(std::string etag) {
  if (etag.rfind("W/", 0) == 0) etag.erase(0, 2);
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') etag = etag.substr(1, etag.size() - 2);
  return etag;
}

}  // namespace

HubClient::FileMetadata HubClient::file_metadata(const std::string& repo, const std::string& file,
                                                 const std::string& revision) {
  // A revision such as refs/pr/1 is one path segment of the URL (huggingface_hub quotes it so).
  std::string segment;
  for (char c : revision) segment += c == '/' ? std::string("%2F") : std::string(1, c);
  const std::string url = fmt::format("{}/{}/resolve/{}/{}", options_.endpoint, repo, segment, file);
  Request head;
  head.head = true;
  head.stay_on_hub = true;
  HttpResponse r = get(url, head);
  if (r.status >= 400) {
    try {
      raise_for(r, fmt::format("fetching {} of `{}` at revision `{}`", file, repo, revision), repo);
    } catch (HubError& e) {
      e.commit = r.headers["x-repo-commit"];
      throw;
    }
  }
  FileMetadata m;
  m.commit = r.headers["x-repo-commit"];
  const std::string linked = r.headers["x-linked-etag"];
  m.etag = normalize_etag(linked.empty() ? r.headers["etag"] : linked);
  const std::string linked_size = r.headers["x-linked-size"];
  if (!linked_size.empty()) r.headers["content-length"] = linked_size;
  m.size = content_length(r);
  m.location = r.status >= 300 && r.status < 400 ? r.headers["location"] : r.url;
  return m;
}

HubClient::StreamResult HubClient::stream_file(const std::string& url, std::uint64_t from, StreamSink& sink,
                                               const std::string& what, const std::string& repo) {
  Request get_request;
  if (from > 0) get_request.range = fmt::format("{}-", from);
  get_request.stream = &sink;
  Transfer transfer;
  HttpResponse r = get(url, get_request, &transfer);
  if (r.status == 416) {  // a resume past the end: the partial file is longer than the file now
    throw HubError{HubErrorKind::kHttp,
                   fmt::format("{}: the server has no bytes from {} on (HTTP 416)", what, from)};
  }
  if (r.status < 200 || r.status >= 300) raise_for(r, what, repo);
  StreamResult out;
  out.received = transfer.streamed;
  out.content_length = content_length(r);
  out.refused = transfer.refused;
  out.error = transfer.error;
  return out;
}

}  // namespace memfit::hub
