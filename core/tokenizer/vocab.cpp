#include "vocab.h"

#include <fmt/format.h>

#include "json_fields.h"

namespace memfit::tokenizer {

Vocab Vocab::from_object(const json& j, const BuildContext& ctx) {
  if (!j.is_object()) ctx.fail(ErrorCode::kWrongType, fmt::format("must be an object token → id, got {}", json_type_name(j)));
  Vocab v;
  v.ids_.reserve(j.size());
  for (const auto& [token, id] : j.items()) v.add(token, token_id(id, ctx, fmt::format("'{}'", token)));
  return v;
}

void Vocab::add(std::string token, TokenId id) {
  if (id >= tokens_.size()) {
    tokens_.resize(static_cast<std::size_t>(id) + 1);
    present_.resize(static_cast<std::size_t>(id) + 1, false);
  }
  tokens_[id] = token;
  present_[id] = true;
  ids_[std::move(token)] = id;
}

}  // namespace memfit::tokenizer
