// Config reading: aliases, defaults, and one clear error per kind of bad input.
#include <doctest/doctest.h>

#include "memfit/error.h"
#include "memfit/format/strict_json.h"
#include "memfit/memory/estimate.h"
#include "memfit/model/config.h"

#include <cmath>
#include <limits>

using namespace memfit;

namespace {

Error error_of(const std::string& config_text) {
  EstimateRequest req;
  req.config_text = config_text;
  req.name = "test";
  auto r = estimate(req);
  REQUIRE_FALSE(r.ok());
  return r.error();
}

}  // namespace

TEST_CASE("aliases are read in order and null counts as absent") {
  Config c(Json::parse(R"({"n_embd": 64, "hidden_size": null, "d": 3})"), "config.json");
  CHECK(c.dim({"hidden_size", "n_embd"}) == 64);
  CHECK(c.dim_or({"missing"}, 7) == 7);
  CHECK(c.dim({"d"}) == 3);
  CHECK(c.dim_or({"x"}, 1) == 1);
  Config f(Json::parse(R"({"h": 4096.0})"), "config.json");
  CHECK(f.dim({"h"}) == 4096);  // an integral float is an integer
}

TEST_CASE("malformed JSON names the file and the position") {
  const Error e = error_of(R"({"model_type": "gpt2", )");
  CHECK(e.code() == ErrorCode::kInvalidJson);
  CHECK(e.message().find("config.json: not valid JSON (at byte") == 0);
  CHECK(error_of("[1, 2]").code() == ErrorCode::kInvalidJson);
  CHECK(error_of("").code() == ErrorCode::kMissingKey);  // empty: no model_type to go on
}

TEST_CASE("config.json is read like Python's json.loads: a repeated key keeps its first place and last value") {
  // json.loads('{"a": 1, "b": {"x": 1, "x": [2]}, "a": 3}') == {"a": 3, "b": {"x": [2]}}, keys a, b
  const Json j = Config::parse(R"({"a": 1, "b": {"x": 1, "x": [2]}, "a": 3})", "config.json");
  REQUIRE(j.size() == 2);
  CHECK(j.begin().key() == "a");
  CHECK(j["a"] == 3);
  CHECK(j["b"].size() == 1);
  CHECK(j["b"]["x"] == Json::array({2}));
}

TEST_CASE("config.json takes Python's NaN, Infinity and -Infinity; strings and strict formats do not change") {
  // json.loads('{"t": [0.0, Infinity], "n": NaN, "m": -Infinity, "s": "NaN Infinity", "k": 2}')
  const Json j = Config::parse(R"({"t": [0.0, Infinity], "n": NaN, "m": -Infinity, "s": "NaN \"Infinity", "k": 2})",
                               "config.json");
  CHECK(j["t"][1].get<double>() == std::numeric_limits<double>::infinity());
  CHECK(std::isnan(j["n"].get<double>()));
  CHECK(j["m"].get<double>() == -std::numeric_limits<double>::infinity());
  CHECK(j["s"] == "NaN \"Infinity");
  CHECK(j["k"] == 2);
  // Words that are not exactly Python's are still errors, and so is an infinite dimension.
  CHECK(error_of(R"({"model_type": "gpt2", "x": infinity})").code() == ErrorCode::kInvalidJson);
  CHECK(error_of(R"({"model_type": "gpt2", "x": Inf})").code() == ErrorCode::kInvalidJson);
  const Error inf_layers = error_of(R"({"model_type": "gpt2", "n_layer": Infinity})");
  CHECK(inf_layers.code() == ErrorCode::kWrongType);  // not an integer
  CHECK(inf_layers.message().find("n_layer") != std::string::npos);
  // The strict dialect (safetensors headers, indexes, device maps) refuses them.
  Json strict;
  CHECK(parse_strict_json(R"({"a": NaN})", 8, &strict).has_value());
  CHECK(parse_strict_json(R"({"a": Infinity})", 8, &strict).has_value());
}

TEST_CASE("config.json nested deeper than Python's recursion limit is refused by name, without recursion") {
  const std::string deep = R"({"a": )" + std::string(5000, '[') + std::string(5000, ']') + "}";
  try {
    (void)Config::parse(deep, "config.json");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kInvalidJson);
    CHECK(e.message() == "config.json: nested deeper than 1000 levels");
  }
  CHECK_NOTHROW((void)Config::parse(R"({"a": )" + std::string(900, '[') + std::string(900, ']') + "}",
                                    "config.json"));
}

TEST_CASE("missing, wrong-typed, zero, negative and huge values are errors that name the key") {
  Config c(Json::parse(R"({"a": "x", "z": 0, "n": -3, "big": 1e30, "f": 1.5, "hbig": 2199023255553})"),
           "config.json");
  auto code_and_message = [](auto fn) -> std::pair<ErrorCode, std::string> {
    try {
      fn();
    } catch (const Error& e) {
      return {e.code(), e.message()};
    }
    return {ErrorCode::kInternal, "no error"};
  };
  auto [c1, m1] = code_and_message([&] { (void)c.dim({"hidden_size", "n_embd"}); });
  CHECK(c1 == ErrorCode::kMissingKey);
  CHECK(m1 == "config.json: missing required key 'hidden_size' (also accepted: 'n_embd')");
  auto [c2, m2] = code_and_message([&] { (void)c.dim({"a"}); });
  CHECK(c2 == ErrorCode::kWrongType);
  CHECK(m2 == "config.json: key 'a' must be an integer, got string \"x\"");
  auto [c3, m3] = code_and_message([&] { (void)c.dim({"z"}); });
  CHECK(c3 == ErrorCode::kInvalidValue);
  CHECK(m3 == "config.json: key 'z' must be >= 1, got 0");
  CHECK(code_and_message([&] { (void)c.count({"n"}); }).first == ErrorCode::kInvalidValue);
  CHECK(code_and_message([&] { (void)c.dim({"big"}); }).first == ErrorCode::kInvalidValue);
  CHECK(code_and_message([&] { (void)c.dim({"f"}); }).first == ErrorCode::kWrongType);
  CHECK(code_and_message([&] { (void)c.dim({"hbig"}); }).first == ErrorCode::kInvalidValue);
  CHECK(code_and_message([&] { (void)c.flag_or({"a"}, false); }).first == ErrorCode::kWrongType);
}

TEST_CASE("bad model configs fail cleanly through estimate()") {
  CHECK(error_of(R"({"model_type": "gpt2", "n_embd": 0})").code() == ErrorCode::kInvalidValue);
  CHECK(error_of(R"({"model_type": "gpt2", "n_embd": -1})").code() == ErrorCode::kInvalidValue);
  CHECK(error_of(R"({"model_type": "gpt2", "n_embd": "768"})").code() == ErrorCode::kWrongType);
  CHECK(error_of(R"({"model_type": "gpt2", "n_embd": 64, "n_head": 5})").code() ==
        ErrorCode::kInvalidValue);  // 64 is not divisible by 5
  // Dimensions that are each allowed but whose product overflows: an error, never a wrap.
  const Error huge = error_of(
      R"({"model_type": "gpt2", "vocab_size": 1099511627776, "n_embd": 1099511627776, "n_head": 1, "n_layer": 1})");
  CHECK(huge.code() == ErrorCode::kOverflow);
  const Error unknown = error_of(R"({"model_type": "no-such-model"})");
  CHECK(unknown.code() == ErrorCode::kUnknownModelType);
  CHECK(unknown.message().find("model_type 'no-such-model' is not supported; supported: ") == 0);
  CHECK(unknown.message().find("llama") != std::string::npos);
  CHECK(error_of(R"({"model_type": 7})").code() == ErrorCode::kWrongType);
}

TEST_CASE("unknown dtype and library are argument errors") {
  EstimateRequest req;
  req.config_text = R"({"model_type": "gpt2"})";
  req.dtypes = {"float12"};
  CHECK(estimate(req).error().code() == ErrorCode::kInvalidArgument);
  req.dtypes = {"bfloat16"};
  req.mode = Mode::kAccelerate;  // accelerate only knows float32 float16 int8 int4
  CHECK(estimate(req).error().code() == ErrorCode::kInvalidArgument);
  req.dtypes = {};
  req.library = "diffusers";
  CHECK(estimate(req).error().code() == ErrorCode::kUnsupportedLibrary);
}

TEST_CASE("an implausible number of layers or experts is refused before any tensor is built") {
  Config c(Json::parse(R"({"num_hidden_layers": 16384, "experts": 16385})"), "config.json");
  CHECK(c.repeats_or({"num_hidden_layers"}, 1) == kMaxRepeats);
  std::string message;
  try {
    (void)c.repeats_or({"experts"}, 1);
  } catch (const Error& e) {
    message = e.message();
  }
  CHECK(message ==
        "config.json: key 'experts' = 16385 is not a plausible number of repeated blocks (at most 16384)");
  const Error e = error_of(R"({"model_type": "llama", "num_hidden_layers": 1099511627776})");
  CHECK(e.code() == ErrorCode::kInvalidValue);
  CHECK(e.message().find("'num_hidden_layers' = 1099511627776") != std::string::npos);
  const Error moe = error_of(R"({"model_type": "mixtral", "num_local_experts": 100000})");
  CHECK(moe.code() == ErrorCode::kInvalidValue);
  CHECK(moe.message().find("num_local_experts") != std::string::npos);
}
