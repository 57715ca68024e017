// repo(request): a Hub repo that is not one model (memfit/repo/repo_kind.h), answered in steps.
// Request: {"kind"?, "repo", "library", "listing": [paths], "sizes": {path: bytes},
//           "texts": {key: text}, "headers": {key: safetensors header JSON text},
//           "binaries": {key: base64 of a file's leading bytes (GGUF headers)},
//           "options": {"dtype", "gpu_bytes", "context"}}
// Reply: {"kind", "needs": [{"repo", "path", "form", "optional", "bytes"?}]} while files are
//        missing ("bytes": how many leading bytes a gguf_header need wants), then
//        {"kind", "report": report_json(...)}.
#include "api_common.h"
#include "memfit/api/api.h"
#include "memfit/format/base64.h"
#include "memfit/repo/repo_kind.h"

namespace memfit::api {
namespace {

std::string text_field(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return {};
  if (!it->is_string()) throw Error(ErrorCode::kInvalidArgument, std::string("request: '") + key + "' must be a string");
  return it->get<std::string>();
}

void string_map(const Json& j, const char* key, std::map<std::string, std::string>& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  if (!it->is_object()) throw Error(ErrorCode::kInvalidArgument, std::string("request: '") + key + "' must be an object");
  for (auto e = it->begin(); e != it->end(); ++e) {
    if (!e.value().is_string())
      throw Error(ErrorCode::kInvalidArgument, std::string("request: ") + key + "['" + e.key() + "'] must be a string");
    out[e.key()] = e.value().get<std::string>();
  }
}

repo::RepoFiles files_field(const Json& j) {
  repo::RepoFiles f;
  f.repo = text_field(j, "repo");
  f.library = text_field(j, "library");
  if (auto it = j.find("listing"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) throw Error(ErrorCode::kInvalidArgument, "request: 'listing' must be a list of paths");
    for (const auto& p : *it) {
      if (!p.is_string()) throw Error(ErrorCode::kInvalidArgument, "request: 'listing' must be a list of paths");
      f.listing.push_back(p.get<std::string>());
    }
  }
  if (auto it = j.find("sizes"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) throw Error(ErrorCode::kInvalidArgument, "request: 'sizes' must be an object");
    for (auto e = it->begin(); e != it->end(); ++e) {
      if (!e.value().is_number_unsigned() && !(e.value().is_number_integer() && e.value().get<std::int64_t>() >= 0))
        throw Error(ErrorCode::kInvalidArgument, "request: sizes['" + e.key() + "'] must be a byte count");
      f.sizes[e.key()] = e.value().get<std::uint64_t>();
    }
  }
  string_map(j, "texts", f.texts);
  string_map(j, "headers", f.headers);
  string_map(j, "binaries", f.binaries);
  for (auto& [key, text] : f.binaries) {
    Result<std::string> bytes = base64_decode(text, "request: binaries['" + key + "']");
    if (!bytes) throw bytes.error();
    text = std::move(bytes).value();
  }
  return f;
}

repo::RepoOptions options_field(const Json& j) {
  repo::RepoOptions o;
  auto it = j.find("options");
  if (it == j.end() || it->is_null()) return o;
  if (!it->is_object()) throw Error(ErrorCode::kInvalidArgument, "request: 'options' must be an object");
  o.dtype = text_field(*it, "dtype");
  for (const char* key : {"gpu_bytes", "context"}) {
    auto v = it->find(key);
    if (v == it->end() || v->is_null()) continue;
    if (!v->is_number() || v->get<double>() < 0)
      throw Error(ErrorCode::kInvalidArgument, std::string("request: options.") + key + " must be a non-negative number");
    if (std::string(key) == "gpu_bytes") o.gpu_bytes = static_cast<std::uint64_t>(v->get<double>());
    else o.context = static_cast<std::int64_t>(v->get<double>());
  }
  return o;
}

Json repo_reply(const Json& j) {
  const repo::RepoFiles files = files_field(j);
  const repo::RepoOptions options = options_field(j);  // checked on every round, not only the last
  const std::string kind_text = text_field(j, "kind");
  const repo::RepoKind kind =
      kind_text.empty() ? repo::detect_kind(files.listing, files.library) : repo::kind_from_name(kind_text);
  Json out = {{"kind", std::string(repo::kind_name(kind))}};
  const auto needs = repo::repo_needs(kind, files);
  if (!needs.empty()) {
    Json& list = out["needs"] = Json::array();
    for (const auto& n : needs) {
      list.push_back({{"repo", n.repo}, {"path", n.path},
                      {"form", n.form == repo::FileNeed::Form::kText ? "text"
                               : n.form == repo::FileNeed::Form::kSafetensorsHeader ? "safetensors_header"
                                                                                    : "gguf_header"},
                      {"optional", n.optional}});
      if (n.bytes > 0) list.back()["bytes"] = n.bytes;
    }
    return out;
  }
  if (kind == repo::RepoKind::kModel) return out;  // the caller estimates it as a model
  out["report"] = repo::report_json(repo::repo_report(kind, files, options));
  return out;
}

}  // namespace

std::string repo(const std::string& request_json) { return respond(request_json, repo_reply); }

}  // namespace memfit::api
