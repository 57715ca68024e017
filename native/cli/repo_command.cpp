#include "repo_command.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_error.h"
#include "exit_codes.h"
#include "file_reader.h"
#include "gguf_files.h"
#include "memfit/format/safetensors.h"
#include "memfit/report/ascii_table.h"

namespace memfit::cli {
namespace fs = std::filesystem;
namespace {

// A folder's walk stops here: a repo is a few hundred files, a wrong folder (a home directory)
// should not be read whole.
constexpr std::size_t kMaxListing = 20000;
constexpr int kMaxDepth = 4;

std::uint64_t header_length(const std::string& first8, const std::string& where) {
  auto n = safetensors::read_header_size(first8, where);
  if (!n) throw n.error();
  return *n;
}

std::string folder_header(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw CliError{kExitFile, fmt::format("{}: cannot be read", file.string())};
  std::string first(8, '\0');
  in.read(first.data(), 8);
  first.resize(static_cast<std::size_t>(in.gcount()));
  const std::uint64_t n = header_length(first, file.string());
  std::string json(static_cast<std::size_t>(n), '\0');
  in.read(json.data(), static_cast<std::streamsize>(n));
  if (static_cast<std::uint64_t>(in.gcount()) != n)
    throw Error(ErrorCode::kSafetensorsHeaderTruncated,
                fmt::format("{}: the header says {} bytes, the file holds fewer", file.string(), n));
  return json;
}

std::string hub_header(hub::HubClient& client, const std::string& repo, const std::string& path) {
  constexpr std::uint64_t kFirst = 64 * 1024;
  auto r = client.fetch_range(repo, path, 0, kFirst - 1);
  const std::string where = repo + "/" + path;
  const std::uint64_t n = header_length(r.body.substr(0, 8), where);
  if (n > safetensors::kMaxHeaderSize)
    throw Error(ErrorCode::kSafetensorsHeaderTooLarge, fmt::format("{}: header of {} bytes", where, n));
  if (r.body.size() < 8 + n) {
    auto rest = client.fetch_range(repo, path, r.body.size(), 8 + n - 1);
    r.body += rest.body;
  }
  if (r.body.size() < 8 + n)
    throw Error(ErrorCode::kSafetensorsHeaderTruncated,
                fmt::format("{}: the header says {} bytes, the Hub sent {}", where, n, r.body.size() - 8));
  return r.body.substr(8, static_cast<std::size_t>(n));
}

bool is_hub(const std::string& target) {
  std::error_code ec;
  return !fs::exists(target, ec) && hub::looks_like_repo_id(target);
}

// One need, read into `files`. An optional file that is absent is recorded as an empty text.
void read_need(const repo::FileNeed& need, repo::RepoFiles& files, const std::string& target,
               hub::HubClient* client) {
  const std::string key = need.key();
  // Another repo (a PEFT adapter's base model) is a folder when that path is one, as
  // from_pretrained looks locally first; else a Hub id.
  std::error_code dir_ec;
  const bool other_folder = !need.repo.empty() && fs::is_directory(need.repo, dir_ec);
  if (!need.repo.empty() && !other_folder && !hub::looks_like_repo_id(need.repo))
    throw CliError{kExitFile, fmt::format("{}: '{}' is neither a folder nor a Hub id (ORG/NAME)", key, need.repo)};
  const bool hub = !other_folder && (!need.repo.empty() || is_hub(target));
  const std::string repo = need.repo.empty() ? target : need.repo;
  if (need.form == repo::FileNeed::Form::kGgufHeader) {
    // Read to the header's end at once (need.bytes is a first guess for readers that cannot
    // tell where the header ends): the parser's reads, the same as `memfit inspect FILE.gguf`.
    const checkpoint::GgufHeaderBytes h =
        hub ? checkpoint::read_hub_gguf_header_bytes(*client, repo, need.path)
            : checkpoint::read_gguf_header_bytes((fs::path(target) / need.path).string());
    files.binaries[key] = h.bytes;
    files.sizes[key] = h.file_size;
    return;
  }
  if (!hub) {
    const fs::path file = fs::path(other_folder ? need.repo : target) / need.path;
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) {
      if (need.optional) { files.texts[key] = ""; return; }
      throw CliError{kExitFile, fmt::format("{}: missing (this repo's other files need it)", file.string())};
    }
    if (need.form == repo::FileNeed::Form::kText) files.texts[key] = io::read_file(file.string());
    else {
      files.headers[key] = folder_header(file);
      files.sizes[key] = fs::file_size(file, ec);
    }
    return;
  }
  try {
    if (need.form == repo::FileNeed::Form::kText) files.texts[key] = client->fetch_file(repo, need.path);
    else files.headers[key] = hub_header(*client, repo, need.path);
  } catch (const hub::HubError& e) {
    if (need.optional && e.kind == hub::HubErrorKind::kEntryNotFound) { files.texts[key] = ""; return; }
    throw e.failure();
  }
}

}  // namespace

repo::RepoFiles list_repo(const std::string& target, hub::HubClient* client) {
  repo::RepoFiles files;
  files.repo = target;
  if (!is_hub(target)) {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(target, fs::directory_options::skip_permission_denied, ec);
         it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) break;
      if (it.depth() >= kMaxDepth) it.disable_recursion_pending();
      if (!it->is_regular_file(ec)) continue;
      // lexically: a symlinked file (an HF cache snapshot links every file into blobs/) keeps its
      // name in the folder instead of resolving to where it points.
      const std::string rel = it->path().lexically_relative(target).generic_string();
      if (rel.empty() || rel[0] == '.') continue;
      files.listing.push_back(rel);
      files.sizes[rel] = it->file_size(ec);
      if (files.listing.size() > kMaxListing)
        throw CliError{kExitFile, fmt::format("{}: more than {} files; not a model repo", target, kMaxListing)};
    }
    std::sort(files.listing.begin(), files.listing.end());
    return files;
  }
  try {
    const auto info = nlohmann::json::parse(client->fetch_model_files(target), nullptr, false);
    if (info.is_discarded() || !info.is_object())
      throw CliError{kExitNetwork, fmt::format("api/models/{}: the Hub answered with something that "
                                               "is not a JSON object", target)};
    if (auto l = info.find("library_name"); l != info.end() && l->is_string()) files.library = *l;
    if (auto s = info.find("siblings"); s != info.end() && s->is_array())
      for (const auto& f : *s) {
        if (!f.is_object() || !f.contains("rfilename") || !f["rfilename"].is_string()) continue;
        const std::string path = f["rfilename"];
        files.listing.push_back(path);
        if (f.contains("size") && f["size"].is_number_unsigned()) files.sizes[path] = f["size"];
      }
  } catch (const hub::HubError& e) {
    throw e.failure();
  }
  return files;
}

void gather_repo(repo::RepoKind kind, repo::RepoFiles& files, const std::string& target,
                 hub::HubClient* client) {
  for (int step = 0; step < repo::kMaxRepoSteps; ++step) {
    const auto needs = repo::repo_needs(kind, files);
    if (needs.empty()) return;
    for (const auto& n : needs) read_need(n, files, target, client);
  }
  if (!repo::repo_needs(kind, files).empty())
    throw Error(ErrorCode::kInternal, fmt::format("{}: still needs files after {} rounds", target,
                                                  repo::kMaxRepoSteps));
}

void print_repo_report(const repo::RepoReport& report) {
  if (!report.title.empty()) fmt::print("{}\n", report.title);
  for (const auto& t : report.tables) fmt::print("{}\n", create_ascii_table(t.columns, t.rows, t.title));
  for (const auto& l : report.lines) fmt::print("{}\n", l);
  for (const auto& n : report.notes) fmt::print("note: {}\n", n);
}

int run_repo_report(repo::RepoKind kind, repo::RepoFiles files, const RepoArgs& args,
                    hub::HubClient* client) {
  gather_repo(kind, files, args.target, client);
  const repo::RepoReport report = repo::repo_report(kind, files, args.options);
  if (args.json) fmt::print("{}\n", repo::report_json(report).dump(2));
  else print_repo_report(report);
  return kExitOk;
}

}  // namespace memfit::cli
