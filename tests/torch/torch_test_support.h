// tests/torch/torch_test_support.h — loading the golden checkpoints and comparing logits.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "executor.h"
#include "weight_store.h"

namespace memfit::test {

// <reference>/golden, or nullopt (the caller skips loudly).
std::optional<std::string> golden_dir();
nlohmann::json golden_json(const std::string& model);  // <golden>/<model>/golden.json

struct Loaded {
  std::unique_ptr<torchrt::LoadedModel> model;
  std::unique_ptr<torchrt::ModelProgram> program;
};
// Loads `checkpoint` with a device map ("" = all on the execution device) and builds its program.
Loaded load(const std::string& checkpoint, const std::string& device_map = "",
            const std::string& config = "", std::optional<DType> dtype = std::nullopt,
            const std::string& offload_folder = "");

// input_ids of golden input "A", "B" or "C" as [B, T] int64.
at::Tensor golden_input(const nlohmann::json& golden, const std::string& input);
at::Tensor run(const Loaded& m, const at::Tensor& ids, torchrt::ExecOptions opt = {});

struct GoldenDiff {
  double max_abs = 0;        // over `last` (full rows) and `first8` (every position)
  int argmax_mismatches = 0; // positions whose argmax differs
  int positions = 0;
};
GoldenDiff compare_to_golden(const at::Tensor& logits, const nlohmann::json& variant_input);

bool bitwise_equal(const at::Tensor& a, const at::Tensor& b);

// A fresh empty folder under the system temp dir, removed by the destructor.
struct TempDir {
  TempDir();
  ~TempDir();
  std::string path;
};

}  // namespace memfit::test
