#include <stdexcept>

#include <fmt/format.h>

#include "failure.h"
#include "half_linear.h"
#include "model_program.h"

namespace memfit::torchrt {

namespace {
struct Family {
  const char* model_type;
  std::unique_ptr<ModelProgram> (*make)(const Model&, const TensorTree&);
};
// The RoPE decoders share decoder.h; each file fills its switches. gemma3 runs its language model.
constexpr Family kFamilies[] = {{"gpt2", make_gpt2},         {"llama", make_llama},
                                {"mistral", make_mistral},   {"qwen2", make_qwen2},
                                {"qwen3", make_qwen3},       {"qwen3_moe", make_qwen3_moe},
                                {"mixtral", make_mixtral},   {"gemma", make_gemma},
                                {"gemma2", make_gemma2},     {"gemma3_text", make_gemma3},
                                {"gemma3", make_gemma3},     {"phi3", make_phi3}};
}  // namespace

namespace {
const at::Tensor& stored(const std::unordered_map<std::string, at::Tensor>& map, const std::string& name) {
  auto it = map.find(name);
  if (it == map.end())
    throw std::runtime_error(fmt::format("weight '{}' is not available to this block (missing from "
                                         "the checkpoint? it was loaded with --allow-missing)", name));
  return it->second;
}
}  // namespace

const at::Tensor& StageWeights::operator[](const std::string& name) const {
  const at::Tensor& t = stored(map_, name);
  const auto u = uncast_.find(name);
  if (u == uncast_.end()) return t;
  auto c = cast_.find(name);
  if (c == cast_.end()) c = cast_.emplace(name, t.to(u->second)).first;
  return c->second;
}

at::Tensor StageWeights::linear(const at::Tensor& x, const std::string& weight, const std::string& bias) const {
  const at::Tensor& w = stored(map_, weight);
  const at::Tensor b = bias.empty() ? at::Tensor() : (*this)[bias];
  if (uncast_.count(weight) && half_linear_applies(x, w)) return half_linear(x, w, b);
  return at::linear(x, (*this)[weight], b);
}

at::Tensor StageWeights::embedding(const std::string& name, const at::Tensor& ids) const {
  if (auto it = gathered_.find(name); it != gathered_.end()) return at::embedding(it->second.first, it->second.second);
  // An uncast table: the rows first, then the cast (the same bits as casting the whole table).
  if (const auto u = uncast_.find(name); u != uncast_.end()) return at::embedding(stored(map_, name), ids).to(u->second);
  return at::embedding((*this)[name], ids);
}

void StageWeights::set_gathered(const std::string& name, at::Tensor rows, at::Tensor row_of_id) {
  gathered_[name] = {std::move(rows), std::move(row_of_id)};
}

const ModelDims& program_dims(const Model& model) {
  const ModelDims* dims = model.dims.get();
  if (!dims)
    throw Failure{FailureKind::kInvalidInput,
                  fmt::format("{}: no transformer dimensions to run the model with", model.config.where())};
  return *dims;
}

std::unique_ptr<ModelProgram> make_program(const std::string& model_type, const Model& model,
                                           const TensorTree& tree) {
  std::vector<std::string> names;
  for (const auto& f : kFamilies) {
    if (model_type == f.model_type) return f.make(model, tree);
    names.emplace_back(f.model_type);
  }
  throw Failure{FailureKind::kUnsupported,
                      fmt::format("model_type '{}' cannot run in memfit-torch yet (it can: {}); "
                                  "`memfit load` still validates and places it",
                                  model_type, fmt::join(names, ", "))};
}

}  // namespace memfit::torchrt
