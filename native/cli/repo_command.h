// native/cli/repo_command.h — `memfit estimate` on a repo that is not one model: GGUF files, a
// diffusers pipeline, a sentence-transformers model, a PEFT adapter (core/repo: memfit/repo/
// repo_kind.h). This file reads what core asks for, from a folder or the Hub, and prints.
#pragma once

#include <string>

#include "hub_client.h"
#include "memfit/repo/repo_kind.h"

namespace memfit::cli {

// The repo's listing (a folder walked, or the Hub's siblings with sizes) and library_name.
repo::RepoFiles list_repo(const std::string& target, hub::HubClient* client);

// Reads what repo_needs() asks for, round by round, into `files`.
void gather_repo(repo::RepoKind kind, repo::RepoFiles& files, const std::string& target,
                 hub::HubClient* client);

struct RepoArgs {
  std::string target;       // a folder or ORG/NAME
  repo::RepoOptions options;
  bool json = false;
};

// The report as text: its title, tables, then lines and notes.
void print_repo_report(const repo::RepoReport& report);

// Prints the report (print_repo_report, or the JSON of report_json). Exit code.
int run_repo_report(repo::RepoKind kind, repo::RepoFiles files, const RepoArgs& args,
                    hub::HubClient* client);

}  // namespace memfit::cli
