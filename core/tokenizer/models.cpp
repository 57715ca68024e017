// The model registry: tokenizer.json's "model".
#include "json_fields.h"

namespace memfit::tokenizer {

std::unique_ptr<Model> make_bpe(const json& j, const BuildContext& ctx);
std::unique_ptr<Model> make_wordpiece(const json& j, const BuildContext& ctx);
std::unique_ptr<Model> make_unigram(const json& j, const BuildContext& ctx);

namespace {
const Factory<Model> kModels[] = {
    {"BPE", make_bpe},
    {"WordPiece", make_wordpiece},
    {"Unigram", make_unigram},
};
}  // namespace

std::unique_ptr<Model> make_model(const json& j, const BuildContext& ctx) {
  // Files from before "type" was written: BPE has "merges", WordPiece "continuing_subword_prefix" alone.
  if (j.is_object() && !j.contains("type")) {
    if (j.contains("merges")) return make_bpe(j, ctx);
    if (j.contains("vocab") && j["vocab"].is_array()) return make_unigram(j, ctx);
    if (j.contains("continuing_subword_prefix")) return make_wordpiece(j, ctx);
  }
  return make_by_type(j, ctx, kModels, "model");
}

}  // namespace memfit::tokenizer
