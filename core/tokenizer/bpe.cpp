// The BPE model: `tokenizers`' models/bpe (model.rs merge_word / tokenize_with_cache, word.rs
// merge_all, serialization.rs), and GPT-2's vocab.json + merges.txt.
#include <mutex>
#include <queue>

#include <fmt/format.h>

#include "json_fields.h"
#include "vocab.h"

namespace memfit::tokenizer {
namespace {

struct MergeTarget {
  std::uint32_t rank;
  TokenId id;
};
std::uint64_t pair_key(TokenId a, TokenId b) { return (static_cast<std::uint64_t>(a) << 32) | b; }

struct Symbol {
  TokenId id;
  std::int64_t prev, next;
  std::size_t len;  // bytes; 0 once merged into its left neighbour
};

struct QueuedMerge {
  std::size_t pos;
  std::uint32_t rank;
  TokenId id;
  // std::priority_queue pops the largest: lowest rank first, then leftmost (word.rs's Ord).
  bool operator<(const QueuedMerge& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
};

struct BpeOptions {
  std::optional<std::string> unk_token, prefix, suffix;
  bool fuse_unk = false, byte_fallback = false, ignore_merges = false;
};

class Bpe final : public Model {
 public:
  Bpe(Vocab vocab, const std::vector<std::pair<std::string, std::string>>& merges, BpeOptions options,
      const BuildContext& ctx)
      : vocab_(std::move(vocab)), o_(std::move(options)) {
    const std::size_t prefix_len = o_.prefix ? o_.prefix->size() : 0;
    merges_.reserve(merges.size());
    for (std::size_t rank = 0; rank < merges.size(); ++rank) {
      const auto& [a, b] = merges[rank];
      const auto ia = vocab_.find(a), ib = vocab_.find(b);
      if (!ia) ctx.fail(ErrorCode::kInvalidValue, fmt::format("merges[{}]: '{}' is not in the vocabulary", rank, a));
      if (!ib) ctx.fail(ErrorCode::kInvalidValue, fmt::format("merges[{}]: '{}' is not in the vocabulary", rank, b));
      const std::string merged = a + (b.size() >= prefix_len ? b.substr(prefix_len) : std::string());
      const auto im = vocab_.find(merged);
      if (!im) ctx.fail(ErrorCode::kInvalidValue, fmt::format("merges[{}]: the merged token '{}' is not in the vocabulary", rank, merged));
      merges_[pair_key(*ia, *ib)] = {static_cast<std::uint32_t>(rank), *im};  // a repeated pair: the later rank
    }
    if (o_.unk_token && !vocab_.find(*o_.unk_token) )
      unk_missing_ = true;  // tokenizers fails only when an unknown character needs it
  }

  void tokenize(std::string_view word, Encoding& out) const override {
    if (word.empty()) return;
    if (o_.ignore_merges) {
      if (const auto id = vocab_.find(word)) return emit(*id, out);
    }
    {
      std::lock_guard<std::mutex> lock(cache_mutex_);
      const auto it = cache_.find(std::string(word));
      if (it != cache_.end()) {
        for (const TokenId id : it->second) emit(id, out);
        return;
      }
    }
    const std::vector<TokenId> ids = merge_word(word);
    for (const TokenId id : ids) emit(id, out);
    std::lock_guard<std::mutex> lock(cache_mutex_);
    if (cache_.size() < kCacheCapacity) cache_.emplace(word, ids);
  }
  std::optional<TokenId> token_to_id(std::string_view token) const override { return vocab_.find(token); }
  const std::string* id_to_token(TokenId id) const override { return vocab_.token(id); }
  std::size_t vocab_size() const override { return vocab_.size(); }
  std::size_t vocab_entries() const override { return vocab_.ids().size(); }

 private:
  static constexpr std::size_t kCacheCapacity = 10000;  // tokenizers' DEFAULT_CACHE_CAPACITY

  void emit(TokenId id, Encoding& out) const {
    out.ids.push_back(id);
    out.tokens.push_back(*vocab_.token(id));
  }

  TokenId unk_id() const {
    if (unk_missing_)
      throw Error(ErrorCode::kInvalidValue, fmt::format("BPE: unk_token '{}' is not in the vocabulary", *o_.unk_token));
    return *vocab_.find(*o_.unk_token);
  }

  std::vector<TokenId> merge_word(std::string_view w) const {
    std::vector<Symbol> symbols;
    symbols.reserve(w.size());
    const auto add = [&](TokenId id, std::size_t len) {
      const auto n = static_cast<std::int64_t>(symbols.size());
      symbols.push_back({id, n - 1, n + 1, len});
    };
    std::optional<std::pair<TokenId, std::size_t>> unk;
    std::string s;
    for (std::size_t i = 0; i < w.size();) {
      std::size_t n = 0;
      decode_utf8(w, i, &n);
      const bool first = i == 0, last = i + n == w.size();
      s.assign(w.substr(i, n));
      if (!first && o_.prefix) s.insert(0, *o_.prefix);
      if (last && o_.suffix) s += *o_.suffix;
      i += n;
      if (const auto id = vocab_.find(s)) {
        if (unk) { add(unk->first, unk->second); unk.reset(); }
        add(*id, n);
        continue;
      }
      if (o_.byte_fallback) {
        std::vector<TokenId> bytes;
        for (const char b : s) {
          const auto id = vocab_.find(fmt::format("<0x{:02X}>", static_cast<unsigned char>(b)));
          if (!id) break;
          bytes.push_back(*id);
        }
        if (bytes.size() == s.size()) {
          for (const TokenId id : bytes) add(id, 1);
          continue;
        }
      }
      if (o_.unk_token) {
        if (unk && o_.fuse_unk) {
          unk->second += n;
        } else {
          if (unk) add(unk->first, unk->second);
          unk = std::make_pair(unk_id(), n);
        }
      }
    }
    if (unk) add(unk->first, unk->second);
    if (!symbols.empty()) symbols.back().next = -1;
    merge_all(symbols);
    std::vector<TokenId> ids;
    for (const Symbol& sym : symbols)
      if (sym.len != 0) ids.push_back(sym.id);
    return ids;
  }

  const MergeTarget* merge_of(TokenId a, TokenId b) const {
    const auto it = merges_.find(pair_key(a, b));
    return it == merges_.end() ? nullptr : &it->second;
  }

  void merge_all(std::vector<Symbol>& symbols) const {
    std::priority_queue<QueuedMerge> queue;
    for (std::size_t i = 0; i + 1 < symbols.size(); ++i)
      if (const MergeTarget* m = merge_of(symbols[i].id, symbols[i + 1].id)) queue.push({i, m->rank, m->id});
    while (!queue.empty()) {
      const QueuedMerge top = queue.top();
      queue.pop();
      Symbol& cur = symbols[top.pos];
      if (cur.len == 0 || cur.next == -1) continue;
      const auto next_pos = static_cast<std::size_t>(cur.next);
      const Symbol right = symbols[next_pos];
      const MergeTarget* m = merge_of(cur.id, right.id);
      if (!m || m->id != top.id) continue;  // an expired entry
      cur.id = top.id;
      cur.len += right.len;
      cur.next = right.next;
      symbols[next_pos].len = 0;
      if (right.next > -1 && static_cast<std::size_t>(right.next) < symbols.size())
        symbols[static_cast<std::size_t>(right.next)].prev = static_cast<std::int64_t>(top.pos);
      if (cur.prev >= 0) {
        const auto prev = static_cast<std::size_t>(cur.prev);
        if (const MergeTarget* pm = merge_of(symbols[prev].id, cur.id)) queue.push({prev, pm->rank, pm->id});
      }
      if (cur.next >= 0 && static_cast<std::size_t>(cur.next) < symbols.size()) {
        if (const MergeTarget* nm = merge_of(cur.id, symbols[static_cast<std::size_t>(cur.next)].id))
          queue.push({top.pos, nm->rank, nm->id});
      }
    }
  }

  Vocab vocab_;
  std::unordered_map<std::uint64_t, MergeTarget> merges_;
  BpeOptions o_;
  bool unk_missing_ = false;
  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<TokenId>> cache_;
};

// "a b" (split at the one space; anything else is an error, as convert_merges_to_hashmap says).
std::pair<std::string, std::string> merge_from_line(std::string_view line, const BuildContext& ctx, const std::string& where) {
  const std::size_t space = line.find(' ');
  if (space == std::string_view::npos || line.find(' ', space + 1) != std::string_view::npos)
    ctx.fail(ErrorCode::kInvalidValue, fmt::format("{}: '{}' is not two tokens separated by one space", where, line));
  return {std::string(line.substr(0, space)), std::string(line.substr(space + 1))};
}

std::optional<std::string> optional_string(const json& j, const char* key, const BuildContext& ctx) {
  if (!has_field(j, key)) return std::nullopt;
  return string_field(j, key, ctx);
}

}  // namespace

std::unique_ptr<Model> make_bpe(const json& j, const BuildContext& ctx) {
  if (has_field(j, "dropout")) {
    const double dropout = number(j["dropout"], ctx.at("dropout"), "dropout");
    if (dropout != 0.0 && dropout != 1.0)
      ctx.at("dropout").fail(ErrorCode::kInvalidValue, fmt::format("BPE dropout {} is random at encode time; memfit encodes deterministically (null or 0)", dropout));
  }
  Vocab vocab = Vocab::from_object(field(j, "vocab", ctx), ctx.at("vocab"));
  const json& m = field(j, "merges", ctx);
  const BuildContext mctx = ctx.at("merges");
  if (!m.is_array()) mctx.fail(ErrorCode::kWrongType, fmt::format("must be a list, got {}", json_type_name(m)));
  std::vector<std::pair<std::string, std::string>> merges;
  merges.reserve(m.size());
  for (std::size_t i = 0; i < m.size(); ++i) {
    const json& e = m[i];
    if (e.is_string()) merges.push_back(merge_from_line(e.get_ref<const std::string&>(), ctx, fmt::format("merges[{}]", i)));
    else if (e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string())
      merges.emplace_back(e[0].get<std::string>(), e[1].get<std::string>());
    else mctx.index(i).fail(ErrorCode::kInvalidValue, fmt::format("a merge must be \"a b\" or [\"a\", \"b\"], got {}", e.dump()));
  }
  BpeOptions o;
  o.unk_token = optional_string(j, "unk_token", ctx);
  o.prefix = optional_string(j, "continuing_subword_prefix", ctx);
  o.suffix = optional_string(j, "end_of_word_suffix", ctx);
  o.fuse_unk = bool_or(j, "fuse_unk", false, ctx);
  o.byte_fallback = bool_or(j, "byte_fallback", false, ctx);
  o.ignore_merges = bool_or(j, "ignore_merges", false, ctx);
  return std::make_unique<Bpe>(std::move(vocab), merges, std::move(o), ctx);
}

std::unique_ptr<Model> make_bpe_from_files(const json& vocab_json, std::string_view merges_txt, const BuildContext& ctx) {
  Vocab vocab = Vocab::from_object(vocab_json, BuildContext{"vocab.json", "", ctx.backend});
  const BuildContext mctx{"merges.txt", "", ctx.backend};
  std::vector<std::pair<std::string, std::string>> merges;
  std::size_t line_no = 0;
  for (std::size_t at = 0; at < merges_txt.size();) {
    std::size_t end = merges_txt.find('\n', at);
    if (end == std::string_view::npos) end = merges_txt.size();
    std::string_view line = merges_txt.substr(at, end - at);
    at = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.rfind("#version", 0) == 0 || line.empty()) continue;
    merges.push_back(merge_from_line(line, mctx, fmt::format("line {}", line_no)));
  }
  return std::make_unique<Bpe>(std::move(vocab), merges, BpeOptions{}, mctx);
}

}  // namespace memfit::tokenizer
