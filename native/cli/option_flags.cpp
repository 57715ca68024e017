#include "option_flags.h"

#include "exit_codes.h"

namespace memfit::cli {
namespace {

struct OptionFlag {
  std::string_view option, flag;
};

// Where the flag is not "--" + the option name with '_' → '-'.
constexpr OptionFlag kFlags[] = {
    {"train.method", "--train"},      {"train.rank", "--rank"},     {"train.targets", "--targets"},
    {"train.optimizer", "--optimizer"}, {"train.grad_checkpointing", "--grad-checkpointing"},
    {"train.zero", "--zero"},         {"train.fsdp", "--fsdp"},     {"train.gpus", "--gpus"},
    {"library", "--library_name"},    {"strategy", "--device-map"}, {"mode", "--compat"},
};

}  // namespace

std::string flag_for(std::string_view option) {
  for (const auto& f : kFlags)
    if (f.option == option) return std::string(f.flag);
  std::string flag = "--";
  for (char c : option) flag += c == '_' ? '-' : c;
  return flag;
}

std::string cli_message(const Error& e) { return e.message_spelled(flag_for); }

CliError cli_error(const Error& e) { return CliError{exit_code_for(e.code()), cli_message(e)}; }

}  // namespace memfit::cli
