// Parsing and sizing safetensors headers: a 1,000-tensor header, and an estimate from a
// 100-shard index (headers only — the weights are never read, so the checkpoint's size does
// not matter).
#include <benchmark/benchmark.h>

#include <fmt/format.h>

#include "memfit/format/checkpoint_index.h"
#include "memfit/format/safetensors.h"
#include "memfit/memory/estimate.h"
#include "memfit/model/checkpoint_tree.h"

namespace st = memfit::safetensors;

namespace {

std::vector<st::TensorEntry> tensors(int layers, int first_layer = 0) {
  std::vector<st::TensorEntry> out;
  for (int i = first_layer; i < first_layer + layers; ++i)
    for (const char* n : {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
                          "self_attn.o_proj", "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj",
                          "input_layernorm", "post_attention_layernorm", "self_attn.rotary"})
      out.push_back({fmt::format("model.layers.{}.{}.weight", i, n), memfit::DType::kBF16,
                     {4096, 4096}});
  return st::layout(out);
}

void BM_ParseHeader1000(benchmark::State& state) {
  const auto entries = tensors(100);  // 1,000 tensors
  const std::string prefix = st::write_header(entries, {{"format", "pt"}});
  const std::uint64_t size = prefix.size() + entries.back().end;
  for (auto _ : state) {
    auto h = st::parse(prefix, size, "bench");
    benchmark::DoNotOptimize(h);
  }
  state.counters["header_bytes"] = static_cast<double>(prefix.size());
}
BENCHMARK(BM_ParseHeader1000)->Unit(benchmark::kMicrosecond);

void BM_ParseAndSize1000(benchmark::State& state) {
  const auto entries = tensors(100);
  const std::string prefix = st::write_header(entries, {{"format", "pt"}});
  for (auto _ : state) {
    auto h = st::parse(prefix, std::nullopt, "bench");
    memfit::EstimateRequest req;
    req.checkpoint = memfit::checkpoint_tensors({{"model.safetensors", *h}});
    req.name = "bench";
    auto r = memfit::estimate(req);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_ParseAndSize1000)->Unit(benchmark::kMicrosecond);

// 100 shards of 10 tensors each (4096×4096 bf16 = 32 MiB per tensor: a 32 GiB checkpoint).
void BM_Estimate100Shards(benchmark::State& state) {
  std::vector<std::pair<std::string, std::string>> shard_headers;
  std::string weight_map;
  for (int s = 0; s < 100; ++s) {
    const std::string shard = fmt::format("model-{:05d}-of-00100.safetensors", s + 1);
    const auto entries = tensors(1, s);
    shard_headers.emplace_back(shard, st::write_header(entries, {{"format", "pt"}}));
    for (const auto& e : entries) weight_map += fmt::format("{}\"{}\":\"{}\"", weight_map.empty() ? "" : ",", e.name, shard);
  }
  const std::string index_text = "{\"metadata\":{},\"weight_map\":{" + weight_map + "}}";
  for (auto _ : state) {
    auto index = memfit::parse_index(index_text, "index");
    memfit::ShardHeaders headers;
    for (const auto& [name, prefix] : shard_headers) headers.emplace_back(name, *st::parse(prefix, std::nullopt, name));
    auto ok = memfit::check_index_against_shards(*index, headers, "index");
    memfit::EstimateRequest req;
    req.checkpoint = memfit::checkpoint_tensors(headers);
    req.name = "bench";
    auto r = memfit::estimate(req);
    benchmark::DoNotOptimize(ok);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_Estimate100Shards)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
