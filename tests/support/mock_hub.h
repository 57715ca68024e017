// tests/support/mock_hub.h — a local stand-in for the Hugging Face Hub on 127.0.0.1.
//
// Started by the test itself on a free port (cpp-httplib). It serves what a test registers:
// model infos, files (with Range support), and the Hub's error responses (gated, not found,
// entry not found), and records the requests it saw (to check e.g. that tokens stay home).
// As the Hub, a file's answer (HEAD or GET) carries X-Repo-Commit (the model's one commit, also
// accepted as a revision) and its ETag; a missing file's 404 carries the commit too.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace memfit::test {

struct SeenRequest {
  std::string method;  // GET or HEAD
  std::string path;
  std::string authorization;
  std::string range;
};

class MockHub {
 public:
  MockHub();
  ~MockHub();
  MockHub(const MockHub&) = delete;
  MockHub& operator=(const MockHub&) = delete;

  std::string endpoint() const;  // http://127.0.0.1:PORT
  int port() const { return port_; }

  // A public model: /api/models/{repo} answers {"id", "library_name"?}; files as given.
  void add_model(const std::string& repo, const std::string& library_name,
                 std::map<std::string, std::string> files);
  // A gated model: every request answers 403 with X-Error-Code: GatedRepo unless the
  // Authorization header is "Bearer <token>".
  void add_gated_model(const std::string& repo, const std::string& token,
                       const std::string& library_name, std::map<std::string, std::string> files);
  // A redirect: /{repo}/resolve/main/{file} → `location` (absolute or relative).
  void add_redirect(const std::string& path, const std::string& location);
  // Any raw route: exact path → (status, body). cpp-httplib cuts the body to a requested Range
  // (keeping the status given, and adding Content-Range); with honor_range false the route
  // answers as a server that ignores Range: the whole body.
  void add_raw(const std::string& path, int status, const std::string& body, bool honor_range = true);

  std::vector<SeenRequest> requests() const;

  // The commit every file of `repo` is at (40 hex digits, fixed by the name) and a file's ETag.
  static std::string commit_of(const std::string& repo);
  static std::string etag_of(const std::string& content);
  // Large files as the Hub serves them: *.safetensors answer 302 to a CDN on another origin
  // (http://localhost:PORT/cdn/...), with X-Linked-Etag and X-Linked-Size on the redirect.
  void serve_lfs_from_cdn(bool on);
  // A GET of the file announces its whole size but sends only the first `bytes` and closes
  // (std::string::npos: served whole again).
  void cut_transfer(const std::string& repo, const std::string& file, std::size_t bytes);
  // The file's HEAD (and GET) says `extra` bytes more than it has (X-Linked-Size).
  void misstate_size(const std::string& repo, const std::string& file, std::size_t extra);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace memfit::test
