// DecodeStream: `tokenizers`' step_decode_stream (tokenizer/mod.rs): decode a window of the last
// ids, and hand out what grew past the text of the window's earlier part.
#include <fmt/format.h>

#include "memfit/tokenizer/tokenizer.h"

namespace memfit::tokenizer {
namespace {
bool ends_with_replacement(const std::string& s) {
  return s.size() >= 3 && s.compare(s.size() - 3, 3, "\xEF\xBF\xBD") == 0;
}
}  // namespace

Result<std::optional<std::string>> DecodeStream::step(TokenId id) {
  return capture([&]() -> std::optional<std::string> {
    const auto decode = [&](const std::vector<TokenId>& ids) {
      auto r = tokenizer_.decode(ids, skip_special_);
      if (!r) throw r.error();
      return std::move(r).value();
    };
    if (prefix_.empty() && !ids_.empty()) {
      std::string p = decode(ids_);
      if (!ends_with_replacement(p)) {
        prefix_ = std::move(p);
        prefix_index_ = ids_.size();
      }
    }
    ids_.push_back(id);
    const std::string text = decode(ids_);
    if (text.size() <= prefix_.size() || ends_with_replacement(text)) return std::nullopt;
    if (text.compare(0, prefix_.size(), prefix_) != 0)
      throw Error(ErrorCode::kInternal, fmt::format("decode stream: after id {} the text no longer starts with '{}'", id, prefix_));
    std::string added = text.substr(prefix_.size());
    const std::size_t new_prefix_index = ids_.size() - prefix_index_;
    ids_.erase(ids_.begin(), ids_.begin() + static_cast<std::ptrdiff_t>(prefix_index_));
    prefix_ = decode(ids_);
    prefix_index_ = new_prefix_index;
    return added;
  });
}

}  // namespace memfit::tokenizer
