// native/cli/estimate_command.h — `memfit estimate`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace memfit::cli {

struct EstimateArgs {
  std::string model;
  std::string name;
  std::string library;
  std::vector<std::string> dtypes;
  std::string compat;       // "" or "accelerate"
  std::string class_name;   // --class
  std::string source = "auto";  // auto | config | checkpoint
  bool exact = false;            // read the checkpoint's metadata from the Hub (HTTP Range)
  bool json = false;

  // Will it run? Any of these adds the inference (and training, fit) sections; unset: 0 / "".
  std::int64_t context = 0;   // --context (default: min(4096, the model's max positions))
  std::int64_t batch = 0;     // --batch (default 1)
  std::string kv_dtype;       // --kv-dtype float16|bfloat16|float8|int8
  std::string engine;         // --engine transformers|vllm|llama.cpp
  std::string dtype;          // --dtype float32|float16|bfloat16|int8|int4|nf4|fp8
  std::string attention;      // --attention sdpa|eager
  std::string overhead;       // --overhead 500MiB
  std::int64_t encoder_length = 0;  // --encoder-length
  std::string vram;           // --vram 24GiB
  std::string gpu;            // --gpu "RTX 4090"
  std::string train;          // --train full|lora|qlora
  std::int64_t rank = 0;      // --rank (default 8)
  std::string targets;        // --targets q_proj,v_proj | all-linear
  std::string optimizer;      // --optimizer adamw|adamw8bit|adafactor|sgd
  bool grad_checkpointing = false;
  int zero = 0;               // --zero 1|2|3
  bool fsdp = false;
  std::int64_t gpus = 0;      // --gpus N

  bool wants_run() const;
};

// Runs the command, printing to stdout/stderr; returns the process exit code.
int run_estimate(const EstimateArgs& args);

}  // namespace memfit::cli
