#include "memfit/generate/stopping.h"

#include <algorithm>

namespace memfit::generate {
namespace {

// An integer or a list of integers, as GenerationConfig accepts eos_token_id.
Result<bool> read_ids(const nlohmann::json& value, const std::string& where, std::vector<std::int64_t>& out) {
  auto wrong = [&] {
    return Error(ErrorCode::kWrongType, where + ": eos_token_id must be a non-negative integer or a list of them, got " +
                                            value.dump());
  };
  if (value.is_number_integer()) {
    if (value.get<std::int64_t>() < 0) return wrong();
    out.push_back(value.get<std::int64_t>());
    return true;
  }
  if (!value.is_array()) return wrong();
  for (const auto& id : value) {
    if (!id.is_number_integer() || id.get<std::int64_t>() < 0) return wrong();
    out.push_back(id.get<std::int64_t>());
  }
  return true;
}

bool sets_key(const nlohmann::json* j) { return j && j->is_object() && j->contains("eos_token_id") && !(*j)["eos_token_id"].is_null(); }

}  // namespace

Result<std::vector<std::int64_t>> eos_token_ids(const nlohmann::json* generation_config, const nlohmann::json& config) {
  std::vector<std::int64_t> ids;
  const nlohmann::json* text_config =
      config.is_object() && config.contains("text_config") ? &config["text_config"] : nullptr;
  Result<bool> read = true;
  if (sets_key(generation_config)) read = read_ids((*generation_config)["eos_token_id"], "generation_config.json", ids);
  else if (sets_key(&config)) read = read_ids(config["eos_token_id"], "config.json", ids);
  else if (sets_key(text_config)) read = read_ids((*text_config)["eos_token_id"], "config.json text_config", ids);
  if (!read) return read.error();
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

StopMatch find_stop(std::string_view text, const std::vector<std::string>& stops, std::size_t search_from) {
  StopMatch best;
  for (std::size_t i = 0; i < stops.size(); ++i) {
    if (stops[i].empty()) continue;
    const std::size_t at = text.find(stops[i], std::min(search_from, text.size()));
    if (at != std::string_view::npos && (!best.found || at < best.cut)) best = {true, at, i};
  }
  return best;
}

std::size_t printable_length(std::string_view text, const std::vector<std::string>& stops) {
  std::size_t keep = text.size();
  // A trailing incomplete UTF-8 sequence waits for its continuation bytes.
  for (std::size_t back = 1; back <= 4 && back <= text.size(); ++back) {
    const auto c = static_cast<unsigned char>(text[text.size() - back]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back
    const std::size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    if (need > back) keep = text.size() - back;
    break;
  }
  // The longest tail that is a proper prefix of some stop string.
  for (const std::string& stop : stops) {
    for (std::size_t len = std::min(stop.size() - (stop.empty() ? 0 : 1), text.size()); len > 0; --len) {
      if (text.substr(text.size() - len) == std::string_view(stop).substr(0, len)) {
        keep = std::min(keep, text.size() - len);
        break;
      }
    }
  }
  return keep;
}

}  // namespace memfit::generate
