#include "torch_test_support.h"

#include <cstring>
#include <filesystem>

#include "memfit/model/config.h"
#include "support/reference.h"

namespace memfit::test {
namespace fs = std::filesystem;

std::optional<std::string> golden_dir() {
  auto ref = reference_dir();
  if (!ref || !file_exists(*ref + "/golden/tiny-gpt2/golden.json")) return std::nullopt;
  return *ref + "/golden";
}

nlohmann::json golden_json(const std::string& model) {
  return nlohmann::json::parse(read_text(*golden_dir() + "/" + model + "/golden.json"));
}

Loaded load(const std::string& checkpoint, const std::string& device_map, const std::string& config,
            std::optional<DType> dtype, const std::string& offload_folder) {
  torchrt::LoadRequest req;
  req.checkpoint = checkpoint;
  req.config = config;
  req.device_map = device_map;
  req.dtype = dtype;
  Loaded out;
  torchrt::LoadOptions opt;
  opt.offload_folder = offload_folder;
  out.model = torchrt::load_model(torchrt::make_load_plan(req, torchrt::device_inventory()), opt);
  out.program = torchrt::make_program(out.model->plan.model_type, out.model->plan.model, out.model->plan.tree);
  return out;
}

at::Tensor golden_input(const nlohmann::json& golden, const std::string& input) {
  const auto rows = golden["inputs"][input]["input_ids"].get<std::vector<std::vector<std::int64_t>>>();
  std::vector<std::int64_t> flat;
  for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
  return at::tensor(flat, at::TensorOptions().dtype(at::kLong))
      .view({static_cast<std::int64_t>(rows.size()), static_cast<std::int64_t>(rows[0].size())});
}

at::Tensor run(const Loaded& m, const at::Tensor& ids, torchrt::ExecOptions opt) {
  torchrt::Executor exec(*m.model, *m.program, opt);
  return exec.forward(ids);
}

GoldenDiff compare_to_golden(const at::Tensor& logits, const nlohmann::json& g) {
  GoldenDiff d;
  const auto B = logits.size(0), T = logits.size(1), V = logits.size(2);
  const auto acc = logits.accessor<float, 3>();
  for (std::int64_t b = 0; b < B; ++b) {
    const auto& last = g["last"][b];
    for (std::int64_t v = 0; v < V; ++v)
      d.max_abs = std::max(d.max_abs, std::abs(static_cast<double>(acc[b][T - 1][v]) - last[v].get<double>()));
    for (std::int64_t t = 0; t < T; ++t) {
      const auto& f8 = g["first8"][b][t];
      for (std::int64_t v = 0; v < 8; ++v)
        d.max_abs = std::max(d.max_abs, std::abs(static_cast<double>(acc[b][t][v]) - f8[v].get<double>()));
      ++d.positions;
      if (logits[b][t].argmax().item<std::int64_t>() != g["argmax"][b][t].get<std::int64_t>()) ++d.argmax_mismatches;
    }
  }
  return d;
}

bool bitwise_equal(const at::Tensor& a, const at::Tensor& b) {
  if (a.sizes() != b.sizes() || a.scalar_type() != b.scalar_type()) return false;
  const auto ca = a.contiguous(), cb = b.contiguous();
  return std::memcmp(ca.data_ptr(), cb.data_ptr(), ca.numel() * ca.element_size()) == 0;
}

TempDir::TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "memfit-torch-test-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  path = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path, ec);
}

}  // namespace memfit::test
