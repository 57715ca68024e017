// A SentencePiece tokenizer.model as the same pipeline a tokenizer.json describes, the way
// transformers' convert_slow_tokenizer.py builds fast tokenizers from one (transformers main,
// 2026: SpmConverter, LlamaConverter, T5Converter, generate_merges), with each choice that
// transformers leaves to the model class taken from the proto's own normalizer_spec, so the
// result encodes as libsentencepiece does (tests/cli/test_sentencepiece_model.cpp holds it to it):
//   - model: trainer_spec.model_type 1 → Unigram(pieces, scores, unk_id, byte_fallback);
//     2 → BPE(vocab = piece → id, merges = generate_merges, unk piece, fuse_unk, byte_fallback);
//   - normalizer: Precompiled(normalizer_spec.precompiled_charsmap) when the spec has one —
//     applied as sentencepiece applies it (longest match at each position), not as the
//     `tokenizers` crate does (by grapheme, shortest match), which differs when a combining mark
//     follows a mapped character ("ａ\u0361": sentencepiece "a\u0361", tokenizers "a") — then
//     with remove_extra_whitespaces (T5, XLM-R, ALBERT) spaces stripped at both ends and runs
//     folded, and a Metaspace pre-tokenizer (SpmConverter's Strip(right) + Replace(" {2,}", "▁")
//     differs from sentencepiece on a trailing tab or newline the rules keep, and on leading
//     spaces without the dummy prefix); without it (Llama, Mistral) LlamaConverter's legacy
//     Prepend("▁") + Replace(" " → "▁") and no pre-tokenizer;
//   - decoder: LlamaConverter's Replace("▁" → " "), ByteFallback, Fuse, Strip(" ", 1, 0);
//   - added tokens: the unknown and control pieces as special tokens, user-defined pieces as
//     plain added tokens, all normalized=false (SpmConverter.tokenizer, LlamaTokenizer's specials);
//   - post-processor: bos before the text (LlamaTokenizer's add_bos_token=True) unless
//     tokenizer_config.json says otherwise; a T5 tokenizer_class appends eos instead.
#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "memfit/format/base64.h"
#include "json_fields.h"
#include "memfit/tokenizer/precompiled_charsmap.h"
#include "memfit/tokenizer/sentencepiece_model.h"
#include "tokenizer_build.h"

namespace memfit::tokenizer {
namespace {

using Model_ = SentencePieceModel;

[[noreturn]] void unsupported(const std::string& what) { throw Error(ErrorCode::kSentencePieceUnsupported, what); }

std::size_t code_points(std::string_view s) {
  std::size_t n = 0;
  for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

// transformers' generate_merges(vocab) with no scores: for each piece (by id), every split into
// two pieces of the vocabulary, ordered by (id of the piece, code points of the left part).
json generate_merges(const std::vector<Model_::Piece>& pieces, const std::unordered_map<std::string, std::size_t>& vocab) {
  struct Merge {
    std::size_t rank, left_len;
    std::size_t left_id, right_id;
    std::string left, right;
  };
  std::vector<Merge> merges;
  for (std::size_t id = 0; id < pieces.size(); ++id) {
    const std::string& p = pieces[id].piece;
    if (vocab.at(p) != id) continue;  // a repeated piece: Python's dict keeps its first place, last id
    std::vector<Merge> local;
    for (std::size_t cut = 1; cut < p.size(); ++cut) {
      if ((static_cast<unsigned char>(p[cut]) & 0xC0) == 0x80) continue;  // splits between characters only
      const auto l = vocab.find(p.substr(0, cut)), r = vocab.find(p.substr(cut));
      if (l == vocab.end() || r == vocab.end()) continue;
      local.push_back({id, code_points(l->first), l->second, r->second, l->first, r->first});
    }
    std::stable_sort(local.begin(), local.end(), [](const Merge& a, const Merge& b) {
      return std::tie(a.left_id, a.right_id) < std::tie(b.left_id, b.right_id);
    });
    merges.insert(merges.end(), local.begin(), local.end());
  }
  std::stable_sort(merges.begin(), merges.end(),
                   [](const Merge& a, const Merge& b) { return std::tie(a.rank, a.left_len) < std::tie(b.rank, b.left_len); });
  json out = json::array();
  for (const Merge& m : merges) out.push_back(json::array({m.left, m.right}));
  return out;
}

json model_json(const Model_& m) {
  if (m.unk_id < 0 || static_cast<std::size_t>(m.unk_id) >= m.pieces.size())
    unsupported(fmt::format("trainer_spec.unk_id {} is not one of the {} pieces", m.unk_id, m.pieces.size()));
  if (m.model_type == Model_::ModelType::kUnigram) {
    json vocab = json::array();
    for (const Model_::Piece& p : m.pieces) vocab.push_back(json::array({p.piece, p.score}));
    return {{"type", "Unigram"}, {"unk_id", static_cast<std::uint32_t>(m.unk_id)}, {"vocab", std::move(vocab)}, {"byte_fallback", m.byte_fallback}};
  }
  if (m.model_type != Model_::ModelType::kBpe)
    unsupported(fmt::format("trainer_spec.model_type {} (only Unigram (1) and BPE (2) models can be converted)",
                            static_cast<int>(m.model_type)));
  std::unordered_map<std::string, std::size_t> ids;
  for (std::size_t i = 0; i < m.pieces.size(); ++i) ids[m.pieces[i].piece] = i;
  json vocab = json::object();
  for (std::size_t i = 0; i < m.pieces.size(); ++i) vocab[m.pieces[i].piece] = ids[m.pieces[i].piece];
  return {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", m.pieces[static_cast<std::size_t>(m.unk_id)].piece},
          {"fuse_unk", true}, {"byte_fallback", m.byte_fallback}, {"vocab", std::move(vocab)},
          {"merges", generate_merges(m.pieces, ids)}};
}

const char* const kMeta = "\xE2\x96\x81";  // ▁ U+2581, SentencePiece's whitespace

json replace(const json& pattern, const std::string& content) { return {{"type", "Replace"}, {"pattern", pattern}, {"content", content}}; }

json normalizer_json(const Model_& m) {
  json parts = json::array();
  if (!m.precompiled_charsmap.empty())
    parts.push_back({{"type", "Precompiled"}, {"precompiled_charsmap", base64_encode(m.precompiled_charsmap)},
                     {"memfit_longest_match", true}});
  if (m.remove_extra_whitespaces) {
    // sentencepiece's normalizer drops leading and trailing spaces and folds runs of them into one;
    // only U+0020 (after the rules: nmt_nfkc makes tabs and newlines spaces, identity does not).
    parts.push_back(replace({{"Regex", "\\A +| +\\z"}}, ""));
    parts.push_back(replace({{"Regex", " {2,}"}}, " "));
  } else {
    if (m.add_dummy_prefix) parts.push_back({{"type", "Prepend"}, {"prepend", kMeta}});
    parts.push_back(replace({{"String", " "}}, kMeta));
  }
  return {{"type", "Sequence"}, {"normalizers", std::move(parts)}};
}

json decoder_json(const Model_& m) {
  json parts = json::array({replace({{"String", kMeta}}, " ")});
  if (m.byte_fallback) parts.push_back({{"type", "ByteFallback"}});
  parts.push_back({{"type", "Fuse"}});
  if (m.add_dummy_prefix) parts.push_back({{"type", "Strip"}, {"content", " "}, {"start", 1U}, {"stop", 0U}});
  return {{"type", "Sequence"}, {"decoders", std::move(parts)}};
}

json added_tokens_json(const Model_& m) {
  json out = json::array();
  for (std::size_t id = 0; id < m.pieces.size(); ++id) {
    const Model_::PieceType t = m.pieces[id].type;
    if (t != Model_::PieceType::kUnknown && t != Model_::PieceType::kControl && t != Model_::PieceType::kUserDefined) continue;
    out.push_back({{"id", id}, {"content", m.pieces[id].piece}, {"single_word", false}, {"lstrip", false}, {"rstrip", false},
                   {"normalized", false}, {"special", t != Model_::PieceType::kUserDefined}});
  }
  return out;
}

// The piece `id` names, when it is one.
const std::string* piece_at(const Model_& m, std::int32_t id) {
  return id >= 0 && static_cast<std::size_t>(id) < m.pieces.size() ? &m.pieces[static_cast<std::size_t>(id)].piece : nullptr;
}

json post_processor_json(const Model_& m, const json& config) {
  const bool t5 = config.is_object() && config.contains("tokenizer_class") && config["tokenizer_class"].is_string() &&
                  config["tokenizer_class"].get<std::string>().find("T5") != std::string::npos;
  const auto flag = [&](const char* key, bool fallback) {
    return config.is_object() && config.contains(key) && config[key].is_boolean() ? config[key].get<bool>() : fallback;
  };
  const std::string* bos = flag("add_bos_token", !t5) ? piece_at(m, m.bos_id) : nullptr;
  const std::string* eos = flag("add_eos_token", t5) ? piece_at(m, m.eos_id) : nullptr;
  if (!bos && !eos) return nullptr;
  json single = json::array(), pair = json::array(), specials = json::object();
  // ids as unsigned JSON numbers, as token ids are read (piece_at checked they are >= 0)
  const auto special = [&](const std::string& piece, std::int32_t id, int type_id, json& seq) {
    seq.push_back({{"SpecialToken", {{"id", piece}, {"type_id", type_id}}}});
    specials[piece] = {{"id", piece}, {"ids", json::array({static_cast<std::uint32_t>(id)})}, {"tokens", json::array({piece})}};
  };
  for (const auto& [seq, names] : {std::pair<json*, const char*>{&single, "A"}, {&pair, "AB"}}) {
    int type_id = 0;
    for (const char* n = names; *n; ++n, ++type_id) {
      if (bos) special(*bos, m.bos_id, type_id, *seq);
      seq->push_back({{"Sequence", {{"id", std::string(1, *n)}, {"type_id", type_id}}}});
      if (eos) special(*eos, m.eos_id, type_id, *seq);
    }
  }
  return {{"type", "TemplateProcessing"}, {"single", single}, {"pair", pair}, {"special_tokens", specials}};
}

// Tokenizer classes whose converter moves or adds pieces (fairseq's id shift, language codes,
// Pegasus' offset): the ids of the model file are not the model's ids, so memfit refuses them
// rather than encode with the wrong ids (those repositories ship a tokenizer.json).
void check_class(const json& config) {
  if (!config.is_object() || !config.contains("tokenizer_class") || !config["tokenizer_class"].is_string()) return;
  const std::string cls = config["tokenizer_class"].get<std::string>();
  for (const char* moved : {"XLMRoberta", "Camembert", "MBart", "Nllb", "Pegasus", "SeamlessM4T", "XGLM", "Barthez"}) {
    if (cls.rfind(moved, 0) == 0)
      unsupported(fmt::format("tokenizer_config.json's tokenizer_class '{}' rearranges the model's pieces (transformers' {}Converter); "
                              "memfit reads such a tokenizer only from its tokenizer.json", cls, moved));
  }
}

// The tokenizer.json root object of a parsed ModelProto.
json root_of(const SentencePieceModel& m, const json& config) {
  check_class(config);
  if (m.pieces.empty()) unsupported("the model has no pieces");
  for (std::size_t i = 0; i < m.pieces.size(); ++i) {
    if (m.pieces[i].piece.empty() || invalid_utf8_at(m.pieces[i].piece) != std::string::npos)
      throw Error(ErrorCode::kSentencePieceMalformed, fmt::format("pieces[{}] is empty or not UTF-8", i));
  }
  if (m.treat_whitespace_as_suffix) unsupported("trainer_spec.treat_whitespace_as_suffix is set");
  if (!m.escape_whitespaces) unsupported("normalizer_spec.escape_whitespaces is off");
  json root = {{"added_tokens", added_tokens_json(m)},
               {"normalizer", normalizer_json(m)},
               {"pre_tokenizer", nullptr},
               {"model", model_json(m)},
               {"post_processor", post_processor_json(m, config)},
               {"decoder", decoder_json(m)}};
  if (m.remove_extra_whitespaces)
    root["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", kMeta}, {"split", true},
                             {"prepend_scheme", m.add_dummy_prefix ? "always" : "never"}};
  return root;
}

}  // namespace

Result<Tokenizer> Tokenizer::from_sentencepiece(std::string_view model_proto, std::string_view tokenizer_config_json,
                                                std::shared_ptr<const TextBackend> backend, const std::string& source) {
  return capture([&]() -> Tokenizer {
    const json config = tokenizer_config_json.empty() ? json::object() : parse_json(tokenizer_config_json, "tokenizer_config.json");
    json root;
    try {
      auto parsed = SentencePieceModel::parse(model_proto);
      if (!parsed.ok()) throw parsed.error();
      root = root_of(*parsed, config);
    } catch (const Error& e) {
      throw Error(e.code(), fmt::format("{}: {}", source, e.message()));
    }
    return tokenizer_from_root(root, std::move(backend), source);
  });
}

}  // namespace memfit::tokenizer
