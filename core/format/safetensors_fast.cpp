// The fast path of the safetensors header parser: one pass of SAX events straight into
// TensorEntry values, with no JSON tree. It accepts only the well-formed shape of a header —
// a root object of entries {"dtype": string, "shape": [uint...], "data_offsets": [uint, uint]}
// and an optional "__metadata__" object of strings — whose checks all pass. On anything else it
// gives up (returns nullopt) and the strict DOM parser in safetensors.cpp runs, so every error
// keeps its one code and exact message, and the fast path never has to describe a failure.
#include "safetensors_fast.h"

#include <algorithm>
#include <set>

#include "memfit/format/strict_json.h"  // sax_parse_json
#include "memfit/model/config.h"  // memfit::Json: the same nlohmann instantiation as the strict
                                  // parser, so the WebAssembly build does not carry a second JSON
                                  // lexer

namespace memfit::safetensors {
namespace {

class FastHeaderSax : public nlohmann::json_sax<Json> {
 public:
  explicit FastHeaderSax(Header* out) : h_(out) {}

  bool null() override { return false; }
  bool boolean(bool) override { return false; }
  bool number_integer(number_integer_t v) override {
    return v >= 0 && number_unsigned(static_cast<number_unsigned_t>(v));
  }
  bool number_float(number_float_t, const string_t&) override { return false; }
  bool binary(binary_t&) override { return false; }
  bool number_unsigned(number_unsigned_t v) override {
    if (state_ == State::kShape) {
      if (v > static_cast<number_unsigned_t>(INT64_MAX)) return false;
      entry_.shape.push_back(static_cast<std::int64_t>(v));
      return true;
    }
    if (state_ == State::kOffsets) {
      if (offsets_seen_ >= 2) return false;
      (offsets_seen_++ == 0 ? entry_.begin : entry_.end) = v;
      return true;
    }
    return false;
  }
  bool string(string_t& v) override {
    if (state_ == State::kEntry && field_ == Field::kDtype) {
      const auto dt = dtype_from_safetensors(v);
      if (!dt) return false;
      entry_.dtype = *dt;
      return true;
    }
    if (state_ == State::kMetadata) {
      h_->metadata.emplace_back(std::move(key_), std::move(v));
      return true;
    }
    return false;
  }
  bool start_object(std::size_t) override {
    switch (state_) {
      case State::kStart: state_ = State::kRoot; return true;
      case State::kRoot:
        if (key_ == "__metadata__") {
          if (metadata_seen_) return false;
          metadata_seen_ = true;
          state_ = State::kMetadata;
        } else {
          entry_ = TensorEntry{};
          entry_.name = std::move(key_);
          seen_ = 0;
          state_ = State::kEntry;
        }
        return true;
      default: return false;
    }
  }
  bool key(string_t& k) override {
    if (state_ == State::kRoot || state_ == State::kMetadata) {
      key_ = std::move(k);
      return true;
    }
    if (state_ != State::kEntry) return false;
    if (k == "dtype") field_ = Field::kDtype;
    else if (k == "shape") field_ = Field::kShape;
    else if (k == "data_offsets") field_ = Field::kOffsets;
    else return false;
    const unsigned bit = 1u << static_cast<unsigned>(field_);
    if (seen_ & bit) return false;  // a field twice: the strict parser names it
    seen_ |= bit;
    return true;
  }
  bool end_object() override {
    switch (state_) {
      case State::kMetadata: state_ = State::kRoot; return true;
      case State::kEntry:
        if (seen_ != 0b111 || !finish_entry()) return false;
        h_->tensors.push_back(std::move(entry_));
        state_ = State::kRoot;
        return true;
      case State::kRoot: state_ = State::kDone; return true;
      default: return false;
    }
  }
  bool start_array(std::size_t) override {
    if (state_ != State::kEntry) return false;
    if (field_ == Field::kShape) state_ = State::kShape;
    else if (field_ == Field::kOffsets) state_ = State::kOffsets, offsets_seen_ = 0;
    else return false;
    return true;
  }
  bool end_array() override {
    if (state_ == State::kOffsets && offsets_seen_ != 2) return false;
    if (state_ != State::kShape && state_ != State::kOffsets) return false;
    state_ = State::kEntry;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

  bool done() const { return state_ == State::kDone; }

 private:
  enum class State { kStart, kRoot, kMetadata, kEntry, kShape, kOffsets, kDone };
  enum class Field : unsigned { kDtype = 0, kShape = 1, kOffsets = 2 };

  // The same checks as the strict parser's parse_entry; a failure hands over to it.
  bool finish_entry() {
    TensorEntry& t = entry_;
    std::uint64_t numel = 1;
    for (std::int64_t d : t.shape)
      if (__builtin_mul_overflow(numel, static_cast<std::uint64_t>(d), &numel)) return false;
    t.numel = numel;
    if (t.end < t.begin) return false;
    std::uint64_t bits = 0;
    if (__builtin_mul_overflow(numel, static_cast<std::uint64_t>(dtype_bits(t.dtype)), &bits))
      return false;
    return bits % 8 == 0 && t.end - t.begin == bits / 8;
  }

  Header* h_;
  State state_ = State::kStart;
  Field field_ = Field::kDtype;
  unsigned seen_ = 0, offsets_seen_ = 0;
  bool metadata_seen_ = false;
  std::string key_;
  TensorEntry entry_;
};

// Duplicate names are found after the pass (sorting views of the names), not with a hash set
// per name during it.
bool names_unique(const Header& h) {
  std::vector<std::string_view> names;
  names.reserve(h.tensors.size());
  for (const auto& t : h.tensors) names.push_back(t.name);
  std::sort(names.begin(), names.end());
  return std::adjacent_find(names.begin(), names.end()) == names.end() &&
         !std::binary_search(names.begin(), names.end(), std::string_view("__metadata__"));
}

}  // namespace

std::optional<Header> parse_header_fast(std::string_view header_json) {
  Header h;
  FastHeaderSax sax(&h);
  if (!sax_parse_json(header_json, &sax) || !sax.done()) return std::nullopt;
  if (!names_unique(h)) return std::nullopt;
  std::set<std::string_view> seen;
  for (const auto& [k, v] : h.metadata)
    if (!seen.insert(k).second) return std::nullopt;
  return h;
}

}  // namespace memfit::safetensors
