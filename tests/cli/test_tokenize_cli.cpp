// Bad tokenizer files and bad input are named, never a crash: core's errors through the native
// backend, and `memfit tokenize`'s messages and exit codes (README "Exit codes").
#include <cstdlib>
#include <string>

#include <doctest/doctest.h>

#include <sys/wait.h>

#include "exit_codes.h"
#include "memfit/tokenizer/tokenizer.h"
#include "native_text_backend.h"
#include "support/reference.h"
#include "support/run_process.h"
#include "support/scratch_files.h"

namespace {

using memfit::tokenizer::Tokenizer;

// A tiny BPE with `pre` as its pre_tokenizer (JSON text, "null" for none).
std::string tiny(const std::string& pre = "null", const std::string& merges = R"(["a b"])") {
  return R"({"added_tokens": [{"id": 3, "content": "<s>", "special": true, "normalized": false}],
             "normalizer": null, "pre_tokenizer": )" + pre + R"(, "post_processor": null, "decoder": null,
             "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": )" + merges + "}}";
}

std::string load_error(const std::string& json) {
  const auto r = Tokenizer::from_json(json, memfit::text::native_text_backend());
  REQUIRE_FALSE(r.ok());
  return r.error().message();
}

// Runs `memfit tokenize ARGS < stdin_text`; stdout + stderr in `out`, the exit code returned.
int run_with_stdin(const std::string& args, const std::string& stdin_text, std::string& out) {
  const std::string dir = memfit::test::scratch_dir("tokenize");
  memfit::test::write_file(dir + "/in.txt", stdin_text);
  const std::string cmd = std::string(MEMFIT_CLI_PATH) + " tokenize " + args + " < " + dir + "/in.txt > " + dir + "/out.txt 2>&1";
  const int status = std::system(cmd.c_str());
  out = memfit::test::read_text(dir + "/out.txt");
  std::system(("rm -rf " + dir).c_str());
  return WEXITSTATUS(status);
}

}  // namespace

TEST_CASE("tokenizer errors: malformed JSON, unknown components, bad regexes, bad merges are named") {
  CHECK(load_error("{\"model\": ").find("tokenizer.json: not JSON") != std::string::npos);
  CHECK(load_error("[1, 2]").find("expected an object") != std::string::npos);
  CHECK(load_error(tiny(R"({"type": "Sequence", "pretokenizers": [{"type": "ByteLevel"}, {"type": "Foo"}]})"))
            .find("pre_tokenizer.pretokenizers[1].type 'Foo' is not a pre-tokenizer memfit knows") != std::string::npos);
  CHECK(load_error(tiny(R"({"type": "Split", "pattern": {"Regex": "(a|"}, "behavior": "Isolated", "invert": false})"))
            .find("the regex '(a|' does not compile (PCRE2") != std::string::npos);
  CHECK(load_error(tiny(R"({"type": "Split", "pattern": {"Regex": "a"}, "behavior": "Sideways", "invert": false})"))
            .find("pre_tokenizer.behavior: behavior must be one of") != std::string::npos);
  CHECK(load_error(tiny("null", R"(["a c"])")).find("merges[0]: 'c' is not in the vocabulary") != std::string::npos);
  CHECK(load_error(tiny("null", R"(["a b c"])")).find("'a b c' is not two tokens separated by one space") != std::string::npos);
  CHECK(load_error(R"({"model": {"vocab": {}, "merges": []}, "decoder": {"type": "CTC"}})")
            .find("decoder.type 'CTC' is not a decoder memfit knows") != std::string::npos);
  CHECK(load_error(R"({"model": {"type": "BPE", "vocab": {"a": -1}, "merges": []}})").find("model.vocab: 'a'") != std::string::npos);
}

TEST_CASE("tokenizer errors: decode names an id out of range; encode refuses invalid UTF-8") {
  const auto tok = Tokenizer::from_json(tiny(), memfit::text::native_text_backend());
  REQUIRE(tok.ok());
  const auto ok = tok->decode({2, 3}, false);
  REQUIRE(ok.ok());
  CHECK(*ok == "ab <s>");  // no decoder: tokens joined by spaces, as tokenizers does
  const auto bad = tok->decode({0, 999}, false);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message() == "decode: ids[1] = 999 is not a token id (the vocabulary has ids 0..2)");
  const auto text = tok->encode("a\xff", true);
  REQUIRE_FALSE(text.ok());
  CHECK(text.error().message() == "encode: the text is not valid UTF-8 (byte 1)");
}

TEST_CASE("memfit tokenize: exit codes and messages for missing files and bad input") {
  const std::string dir = memfit::test::scratch_dir("tokenize-file");
  memfit::test::write_file(dir + "/tokenizer.json", tiny());
  const auto missing = memfit::test::run_memfit({"tokenize", dir + "/nothing-here"});
  CHECK(missing.exit_code == memfit::cli::kExitFile);
  CHECK(missing.err.find("no such file or folder") != std::string::npos);

  const auto ok = memfit::test::run_memfit({"tokenize", dir, "--text", "ab<s>ba", "--json"});
  CHECK(ok.exit_code == 0);
  CHECK(ok.out == "{\"ids\":[2,3,1,0],\"tokens\":[\"ab\",\"<s>\",\"b\",\"a\"]}\n");

  const auto range = memfit::test::run_memfit({"tokenize", dir, "--decode", "--text", "2,99"});
  CHECK(range.exit_code == memfit::cli::kExitInvalidInput);
  CHECK(range.err == "memfit: error: --text: decode: ids[1] = 99 is not a token id (the vocabulary has ids 0..2)\n");

  std::string out;
  CHECK(run_with_stdin(dir + " --jsonl", "\"ab\"\n{\"not\": \"a string\"}\n", out) == memfit::cli::kExitInvalidInput);
  CHECK(out.find("{\"ids\":[2],\"tokens\":[\"ab\"]}") != std::string::npos);
  CHECK(out.find("memfit: error: stdin line 2: '{\"not\": \"a string\"}' is not a JSON string") != std::string::npos);
  CHECK(run_with_stdin(dir + " --jsonl --decode", "[2]\n[0, -1]\n", out) == memfit::cli::kExitInvalidInput);
  CHECK(out.find("stdin line 2: ids[1] = -1 is not a token id") != std::string::npos);
  CHECK(run_with_stdin(dir + " --jsonl --decode", "[2]\n[1, 7]\n", out) == memfit::cli::kExitInvalidInput);
  CHECK(out.find("stdin line 2: decode: ids[1] = 7 is not a token id") != std::string::npos);
  std::system(("rm -rf " + dir).c_str());
}
