#include "added_vocabulary.h"

#include "pattern.h"

namespace memfit::tokenizer {

void AddedVocabulary::Trie::insert(const std::string& pattern, int token) {
  std::uint32_t n = 0;
  for (const char ch : pattern) {
    const auto c = static_cast<unsigned char>(ch);
    const auto it = nodes[n].next.find(c);
    if (it != nodes[n].next.end()) {
      n = it->second;
    } else {
      nodes.emplace_back();
      const auto created = static_cast<std::uint32_t>(nodes.size() - 1);
      nodes[n].next[c] = created;
      n = created;
    }
  }
  if (nodes[n].token < 0) nodes[n].token = token;
}

int AddedVocabulary::Trie::longest_at(std::string_view text, std::size_t at, std::size_t* length) const {
  int found = -1;
  std::uint32_t n = 0;
  for (std::size_t i = at; i < text.size(); ++i) {
    const auto it = nodes[n].next.find(static_cast<unsigned char>(text[i]));
    if (it == nodes[n].next.end()) break;
    n = it->second;
    if (nodes[n].token >= 0) {
      found = nodes[n].token;
      *length = i + 1 - at;
    }
  }
  return found;
}

AddedVocabulary::AddedVocabulary(std::vector<AddedToken> tokens, const Normalizer* normalizer, const TextBackend& backend)
    : tokens_(std::move(tokens)), classes_{&backend} {
  for (std::size_t i = 0; i < tokens_.size(); ++i) {
    const AddedToken& t = tokens_[i];
    by_id_[t.id] = i;
    by_content_[t.content] = i;
    if (t.content.empty()) continue;  // add_tokens ignores empty contents
    if (t.normalized) {
      std::string pattern = t.content;
      if (normalizer) normalizer->normalize(pattern);
      if (pattern.empty()) continue;
      normalized_.insert(pattern, static_cast<int>(i));
      have_normalized_ = true;
    } else {
      raw_.insert(t.content, static_cast<int>(i));
      have_raw_ = true;
    }
  }
}

const AddedToken* AddedVocabulary::by_id(TokenId id) const {
  const auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : &tokens_[it->second];
}

const AddedToken* AddedVocabulary::by_content(std::string_view content) const {
  const auto it = by_content_.find(std::string(content));
  return it == by_content_.end() ? nullptr : &tokens_[it->second];
}

namespace {
char32_t last_char(std::string_view s, std::size_t end) {
  std::size_t start = end - 1;
  while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
  std::size_t n = 0;
  return decode_utf8(s, start, &n);
}
}  // namespace

void AddedVocabulary::split(Split piece, const Trie& trie, std::vector<Split>& out) const {
  const std::string_view s = piece.text;
  std::size_t start_offset = 0;
  const auto push = [&](std::size_t b, std::size_t e, std::optional<TokenId> id) {
    if (e <= b) return;
    Split sub = slice(piece, b, e);
    sub.added = id;
    out.push_back(std::move(sub));
  };
  for (std::size_t at = 0; at < s.size();) {
    std::size_t len = 0;
    const int index = trie.longest_at(s, at, &len);
    if (index < 0) {
      ++at;
      continue;
    }
    std::size_t start = at, stop = at + len;
    at = stop;  // the next search starts after this match, kept or not
    const AddedToken& t = tokens_[static_cast<std::size_t>(index)];
    if (t.single_word) {
      std::size_t n = 0;
      const bool start_space = start == 0 || !classes_.is_word(last_char(s, start));
      const bool stop_space = stop == s.size() || !classes_.is_word(decode_utf8(s, stop, &n));
      if (!start_space || !stop_space) continue;
    }
    if (t.lstrip) {
      std::size_t b = start;
      while (b > 0) {
        std::size_t p = b - 1;
        while (p > 0 && (static_cast<unsigned char>(s[p]) & 0xC0) == 0x80) --p;
        std::size_t n = 0;
        if (!is_white_space(decode_utf8(s, p, &n))) break;
        b = p;
      }
      start = std::max(b, start_offset);
    }
    if (t.rstrip) {
      while (stop < s.size()) {
        std::size_t n = 0;
        if (!is_white_space(decode_utf8(s, stop, &n))) break;
        stop += n;
      }
      at = stop;
    }
    push(start_offset, start, std::nullopt);
    push(start, stop, t.id);
    start_offset = stop;
  }
  push(start_offset, s.size(), std::nullopt);
}

std::vector<Split> AddedVocabulary::extract_and_normalize(std::string_view text, const Normalizer* normalizer) const {
  Split whole;
  whole.text = std::string(text);
  if (!text.empty()) decode_utf8(text, 0, &whole.origin_len);
  std::vector<Split> raw;
  if (have_raw_) split(std::move(whole), raw_, raw);
  else if (!whole.text.empty()) raw.push_back(std::move(whole));
  std::vector<Split> out;
  out.reserve(raw.size());
  for (Split& piece : raw) {
    if (piece.added) {
      out.push_back(std::move(piece));
      continue;
    }
    if (normalizer) {
      if (piece.origin_len > 0) {
        std::string first = piece.text.substr(0, piece.origin_len);
        normalizer->normalize(first);
        piece.origin_len = first.size();
      }
      normalizer->normalize(piece.text);
    }
    if (have_normalized_) split(std::move(piece), normalized_, out);
    else if (!piece.text.empty()) out.push_back(std::move(piece));
  }
  return out;
}

}  // namespace memfit::tokenizer
