#include "tokenize_command.h"

#include <cctype>
#include <cstdio>
#include <iostream>
#include <iterator>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_error.h"
#include "load_tokenizer.h"

namespace memfit::cli {
namespace {

using nlohmann::json;
using tokenizer::Encoding;
using tokenizer::TokenId;
using tokenizer::Tokenizer;

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// A value quoted in an error, cut to a readable length.
std::string shown(std::string_view s) {
  constexpr std::size_t kMax = 80;
  return s.size() <= kMax ? std::string(s) : std::string(s.substr(0, kMax)) + "…";
}

[[noreturn]] void bad_input(const std::string& where, const std::string& what) {
  throw CliError{kExitInvalidInput, fmt::format("{}: {}", where, what)};
}

// A JSON list of ids ("[1, 2]"), or with --text also "1,2" / "1 2".
std::vector<TokenId> parse_ids(const std::string& text, const std::string& where, bool allow_plain) {
  json j;
  std::string s = text;
  if (allow_plain && s.find('[') == std::string::npos) {
    // "1,2,3" or "1 2 3": the numbers, comma-separated, in brackets
    std::string list;
    std::size_t i = 0;
    while (i < s.size()) {
      while (i < s.size() && (s[i] == ',' || std::isspace(static_cast<unsigned char>(s[i])))) ++i;
      const std::size_t b = i;
      while (i < s.size() && s[i] != ',' && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
      if (i > b) list += (list.empty() ? "" : ",") + s.substr(b, i - b);
    }
    s = "[" + list + "]";
  }
  try {
    j = json::parse(s);
  } catch (const json::parse_error&) {
    bad_input(where, fmt::format("'{}' is not a JSON list of token ids", shown(text)));
  }
  if (!j.is_array()) bad_input(where, fmt::format("'{}' is not a JSON list of token ids", shown(text)));
  std::vector<TokenId> ids;
  for (std::size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_number_unsigned() || j[i].get<std::uint64_t>() > 0xFFFFFFFFull)
      bad_input(where, fmt::format("ids[{}] = {} is not a token id (a non-negative integer)", i, dump(j[i])));
    ids.push_back(static_cast<TokenId>(j[i].get<std::uint64_t>()));
  }
  return ids;
}

json encoding_json(const Encoding& e) { return json{{"ids", e.ids}, {"tokens", e.tokens}}; }

Encoding encode(const Tokenizer& tok, const std::string& text, bool add_special, const std::string& where) {
  auto r = tok.encode(text, add_special);
  if (!r) bad_input(where, r.error().message());
  return std::move(r).value();
}

std::string decode(const Tokenizer& tok, const std::vector<TokenId>& ids, bool skip_special, const std::string& where) {
  auto r = tok.decode(ids, skip_special);
  if (!r) bad_input(where, r.error().message());
  return std::move(r).value();
}

int run_jsonl(const Tokenizer& tok, const TokenizeArgs& args) {
  std::string line;
  for (std::size_t n = 1; std::getline(std::cin, line); ++n) {
    const std::string where = fmt::format("stdin line {}", n);
    if (args.decode) {
      const std::string text = decode(tok, parse_ids(line, where, false), args.no_special, where);
      fmt::print("{}\n", dump(json{{"text", text}}));
      continue;
    }
    json j;
    try {
      j = json::parse(line);
    } catch (const json::parse_error&) {
      bad_input(where, fmt::format("'{}' is not a JSON string", shown(line)));
    }
    if (!j.is_string()) bad_input(where, fmt::format("'{}' is not a JSON string", shown(line)));
    fmt::print("{}\n", dump(encoding_json(encode(tok, j.get<std::string>(), !args.no_special, where))));
  }
  std::fflush(stdout);
  return kExitOk;
}

}  // namespace

int run_tokenize(const TokenizeArgs& args) {
  return guarded([&]() -> int {
    const Tokenizer tok = text::load_tokenizer(args.path);
    if (args.jsonl) return run_jsonl(tok, args);
    const std::string input = args.text ? *args.text
                                        : std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    const std::string where = args.text ? "--text" : "stdin";
    if (args.decode) {
      const std::string text = decode(tok, parse_ids(input, where, true), args.no_special, where);
      if (args.json) fmt::print("{}\n", dump(json{{"text", text}}));
      else fmt::print("{}\n", text);
      return kExitOk;
    }
    const Encoding e = encode(tok, input, !args.no_special, where);
    if (args.json) {
      fmt::print("{}\n", dump(encoding_json(e)));
    } else {
      fmt::print("{} tokens\nids: {}\ntokens: {}\n", e.ids.size(), dump(json(e.ids)), dump(json(e.tokens)));
    }
    return kExitOk;
  });
}

}  // namespace memfit::cli
