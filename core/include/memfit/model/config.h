// memfit/model/config.h — typed, checked access to a parsed config.json.
//
// Mirrors how transformers' configuration classes read their keys: several aliases for one field
// (`n_embd` / `hidden_size` / `d_model`), a default when the key is absent (or null), nested
// sub-configs (`text_config`, `vision_config`). Every failure names the file, the key and what
// was expected vs found.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace memfit {

// Key order matters (accelerate takes the *first* AutoModelFor* key of auto_map), so configs
// keep the order of the file.
using Json = nlohmann::ordered_json;

using Keys = std::initializer_list<const char*>;

// The largest value accepted for a single dimension; anything larger is a corrupt config.
inline constexpr std::int64_t kMaxDim = std::int64_t{1} << 40;
// The largest number of repeated blocks (layers, experts, groups). Each repeat adds tensors, so
// anything near the tree's tensor cap is rejected here, before a single tensor is built: a
// hostile `"num_hidden_layers": 2^40` fails at once instead of after building 250,000 tensors.
// The largest real models have ~100 layers and ~400 experts.
inline constexpr std::int64_t kMaxRepeats = 16'384;

class Config {
 public:
  // `where` names the source in messages, e.g. "config.json" or "config.json: text_config".
  // The JSON is copied once and shared by every sub-config taken from it.
  Config(Json json, std::string where);

  // Parses text as a JSON object; throws Error(kInvalidJson) naming `where`.
  static Json parse(std::string_view text, const std::string& where);
  // How many times parse() has run in this process: a command parses its config once (tested).
  static std::size_t parse_count();

  bool has(std::string_view key) const;  // present and not null
  bool has_any(Keys keys) const;

  // A size: an integer in [1, kMaxDim]. Required, or with a default.
  std::int64_t dim(Keys keys) const;
  std::int64_t dim_or(Keys keys, std::int64_t fallback) const;
  // A count: an integer in [0, kMaxDim].
  std::int64_t count(Keys keys) const;
  std::int64_t count_or(Keys keys, std::int64_t fallback) const;
  // A number of repeated blocks: an integer in [0, kMaxRepeats].
  std::int64_t repeats_or(Keys keys, std::int64_t fallback) const;
  double number_or(Keys keys, double fallback) const;
  bool flag_or(Keys keys, bool fallback) const;
  std::string string_or(Keys keys, std::string fallback) const;
  std::optional<std::string> string_opt(Keys keys) const;
  // A list of integers (e.g. per-layer values); each in [0, kMaxDim].
  std::optional<std::vector<std::int64_t>> int_list(Keys keys) const;
  std::optional<std::vector<std::string>> string_list(Keys keys) const;

  // Nested object (returns nullopt when absent/null; error when not an object).
  std::optional<Config> sub(std::string_view key) const;

  const Json& json() const { return *json_; }
  const std::string& where() const { return where_; }

 private:
  // The first key of `keys` that is present (non-null), or nullptr.
  const Json* find(Keys keys, const char** found_key) const;
  std::int64_t checked_int(const Json& v, const char* key, std::int64_t lo) const;
  [[noreturn]] void missing(Keys keys) const;

  Config(std::shared_ptr<const Json> owner, const Json* node, std::string where);

  std::shared_ptr<const Json> owner_;
  const Json* json_;
  std::string where_;
};

}  // namespace memfit
