#include "support/mock_hub.h"

#include <httplib.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>

namespace memfit::test {

struct Model {
  std::string library_name;
  std::string token;  // non-empty: gated
  std::map<std::string, std::string> files;
};

struct MockHub::Impl {
  httplib::Server server;
  std::thread thread;
  mutable std::mutex mu;
  std::map<std::string, Model> models;
  std::map<std::string, std::string> redirects;
  struct Raw {
    int status;
    std::string body;
    bool honor_range;
  };
  std::map<std::string, Raw> raw;
  std::vector<SeenRequest> seen;
  bool lfs_cdn = false;
  std::map<std::string, std::string> cdn;  // /cdn/<etag> → content
  std::map<std::string, std::size_t> cut, extra;  // "repo/file" → bytes sent, bytes misstated

  void handle(const httplib::Request& req, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mu);
    seen.push_back({req.method, req.path, req.get_header_value("Authorization"), req.get_header_value("Range")});
    if (auto it = cdn.find(req.path); it != cdn.end()) {
      res.set_content(it->second, "application/octet-stream");  // no token asked: a signed URL's place
      return;
    }
    if (auto it = raw.find(req.path); it != raw.end()) {
      // httplib applies req.ranges to the response after this handler: forgetting them is how
      // a test server ignores Range.
      if (!it->second.honor_range) const_cast<httplib::Request&>(req).ranges.clear();
      res.status = it->second.status;
      res.set_content(it->second.body, "application/json");
      return;
    }
    if (auto it = redirects.find(req.path); it != redirects.end()) {
      res.status = 302;
      res.set_header("Location", it->second);
      return;
    }
    std::string repo, file;
    bool api = false;
    const std::string api_prefix = "/api/models/";
    if (req.path.rfind(api_prefix, 0) == 0) {
      api = true;
      repo = req.path.substr(api_prefix.size());
    } else {
      const auto pos = req.path.find("/resolve/");
      if (pos == std::string::npos) return not_found(res, "RepoNotFound");
      repo = req.path.substr(1, pos - 1);
      const std::string rest = req.path.substr(pos + 9);  // revision/file
      const auto slash = rest.find('/');
      if (slash == std::string::npos) return not_found(res, "EntryNotFound");
      const std::string revision = rest.substr(0, slash);
      if (revision != "main" && revision != commit_of(repo)) return not_found(res, "RevisionNotFound");
      file = rest.substr(slash + 1);
    }
    auto m = models.find(repo);
    if (m == models.end()) {
      res.status = 401;  // what the Hub answers an anonymous request for a missing repo
      res.set_header("X-Error-Code", "RepoNotFound");
      res.set_content(R"({"error":"Repository not found"})", "application/json");
      return;
    }
    if (!m->second.token.empty() &&
        req.get_header_value("Authorization") != "Bearer " + m->second.token) {
      res.status = 403;
      res.set_header("X-Error-Code", "GatedRepo");
      res.set_content(R"({"error":"Access to model is restricted"})", "application/json");
      return;
    }
    if (api) {
      std::string body = "{\"id\":\"" + repo + "\"";
      if (!m->second.library_name.empty())
        body += ",\"library_name\":\"" + m->second.library_name + "\"";
      body += "}";
      res.set_content(body, "application/json");
      return;
    }
    res.set_header("X-Repo-Commit", commit_of(repo));
    auto f = m->second.files.find(file);
    if (f == m->second.files.end()) return not_found(res, "EntryNotFound");
    const std::string& content = f->second;
    const std::string key = repo + "/" + file;
    const std::string etag = "\"" + etag_of(content) + "\"";
    const std::size_t misstated = extra.count(key) ? extra[key] : 0;
    if (lfs_cdn && file.size() > 12 && file.substr(file.size() - 12) == ".safetensors") {
      const std::string location = "/cdn/" + etag_of(content);
      cdn[location] = content;
      res.status = 302;
      res.set_header("Location", "http://localhost:" + std::to_string(port) + location);
      res.set_header("X-Linked-Etag", etag);
      res.set_header("X-Linked-Size", std::to_string(content.size() + misstated));
      return;
    }
    res.set_header("ETag", etag);
    if (misstated) res.set_header("X-Linked-Size", std::to_string(content.size() + misstated));
    if (auto c = cut.find(key); c != cut.end() && req.method == "GET") {
      // The whole length announced, the first bytes sent, then the connection dropped.
      const std::size_t sent = c->second;
      res.set_content_provider(content.size(), "application/octet-stream",
                               [content, sent](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
                                 if (offset >= sent) return false;
                                 sink.write(content.data() + offset, std::min(length, sent - offset));
                                 return true;
                               });
      return;
    }
    res.set_content(content, "application/octet-stream");  // httplib serves Range itself
  }

  int port = 0;

  static void not_found(httplib::Response& res, const char* code) {
    res.status = 404;
    res.set_header("X-Error-Code", code);
    res.set_content(R"({"error":"not found"})", "application/json");
  }
};

MockHub::MockHub() : impl_(std::make_unique<Impl>()) {
  impl_->server.Get(".*", [this](const httplib::Request& q, httplib::Response& r) {
    impl_->handle(q, r);
  });
  port_ = impl_->server.bind_to_any_port("127.0.0.1");
  impl_->port = port_;
  impl_->thread = std::thread([this] { impl_->server.listen_after_bind(); });
  while (!impl_->server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

MockHub::~MockHub() {
  impl_->server.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

std::string MockHub::endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }

void MockHub::add_model(const std::string& repo, const std::string& library_name,
                        std::map<std::string, std::string> files) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->models[repo] = Model{library_name, "", std::move(files)};
}

void MockHub::add_gated_model(const std::string& repo, const std::string& token,
                              const std::string& library_name,
                              std::map<std::string, std::string> files) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->models[repo] = Model{library_name, token, std::move(files)};
}

void MockHub::add_redirect(const std::string& path, const std::string& location) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->redirects[path] = location;
}

void MockHub::add_raw(const std::string& path, int status, const std::string& body, bool honor_range) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->raw[path] = {status, body, honor_range};
}

std::string MockHub::commit_of(const std::string& repo) {
  std::string out;
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a, extended to 40 hex digits
  while (out.size() < 40) {
    for (char c : repo + std::to_string(out.size())) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    out += buf;
  }
  return out.substr(0, 40);
}

std::string MockHub::etag_of(const std::string& content) {
  std::uint64_t h = 1469598103934665603ull;
  for (char c : content) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return std::string(buf) + std::to_string(content.size());
}

void MockHub::serve_lfs_from_cdn(bool on) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->lfs_cdn = on;
}

void MockHub::cut_transfer(const std::string& repo, const std::string& file, std::size_t bytes) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (bytes == std::string::npos) impl_->cut.erase(repo + "/" + file);
  else impl_->cut[repo + "/" + file] = bytes;
}

void MockHub::misstate_size(const std::string& repo, const std::string& file, std::size_t extra) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->extra[repo + "/" + file] = extra;
}

std::vector<SeenRequest> MockHub::requests() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->seen;
}

}  // namespace memfit::test
