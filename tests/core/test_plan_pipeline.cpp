// Multi-node plans (`plan --nodes`): stage splits, per-node maps, what the link carries, the speed
// estimate. Expected values are worked out by hand in the comments.
#include <doctest/doctest.h>

#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "memfit/model/model.h"
#include "memfit/model/nn_layers.h"
#include "memfit/model/tree_builder.h"
#include "memfit/plan/pipeline.h"
#include "support/reference.h"

using namespace memfit;
using namespace memfit::plan;

namespace {

// emb: Embedding(100, 100) = 40,000 B; layers.0..n-1: Block of Linear(100, 100) = 40,400 B;
// head: tied to emb when `tied` (0 B in one piece), else Linear(100, 100, no bias) = 40,000 B.
Model blocks_model(int n, bool tied) {
  TreeBuilder b("Model");
  nn::embedding(b, "emb", 100, 100);
  {
    auto l = b.module("layers", "ModuleList");
    for (int i = 0; i < n; ++i) {
      auto blk = b.module(std::to_string(i), "Block");
      nn::linear(b, "a", 100, 100);
    }
  }
  if (tied) nn::tied_linear(b, "head", "emb.weight");
  else nn::linear(b, "head", 100, 100, false);
  b.set_no_split({"Block"});
  Model m;
  m.tree = b.finish();
  return m;
}

PipelineRequest request(const std::string& nodes) {
  PipelineRequest r;
  auto n = parse_nodes(nodes);
  REQUIRE_MESSAGE(n, n.error().message());
  r.nodes = *n;
  r.plan.strategy = Strategy::kSequential;
  return r;
}

std::set<std::string> keys(const DeviceMap& m) {
  std::set<std::string> out;
  for (const auto& [k, d] : m) out.insert(k);
  return out;
}

}  // namespace

TEST_CASE("--nodes: hosts with their budgets and GPU kind; errors name the node and entry") {
  auto n = parse_nodes("a=0:24GiB,1:24GiB,cpu:64GiB;b=0=8GB,cpu:32GiB,gpu:H100 SXM;");
  REQUIRE_MESSAGE(n, n.error().message());
  REQUIRE(n->size() == 2);
  CHECK((*n)[0].name == "a");
  CHECK((*n)[0].gpu_count() == 2);
  CHECK((*n)[0].capacity() == (24ull + 24 + 64) << 30);
  CHECK((*n)[0].gpu == nullptr);
  CHECK((*n)[1].capacity() == 8000000000ull + (32ull << 30));
  REQUIRE((*n)[1].gpu != nullptr);
  CHECK((*n)[1].gpu == &find_gpu("H100 SXM"));
  auto fails = [](const std::string& spec, const std::string& words) {
    auto r = parse_nodes(spec);
    REQUIRE_FALSE(r);
    CHECK_MESSAGE(r.error().message().find(words) != std::string::npos, r.error().message());
  };
  fails("0:24GiB", "not NAME=BUDGETS");
  fails("a=0:24GiB;a=cpu:8GiB", "'a' is given twice");
  fails("a=0:lots", "node 'a'");
  fails("a=", "node 'a': no budgets");
  fails("a=cpu:8GiB,gpu:H100 SXM", "budgets no GPU");
  fails("a=0:8GiB,gpu:no such card", "node 'a'");
  fails("a b=0:8GiB", "not a node name");
  fails(" ; ", "no nodes given");
}

TEST_CASE("--link: rates in bits or bytes per second, an optional one-way latency") {
  auto l = parse_link("10Gbps");
  REQUIRE(l);
  CHECK(l->bytes_per_s == doctest::Approx(1.25e9));
  CHECK(l->latency_s == doctest::Approx(LinkSpec{}.latency_s));
  l = parse_link("100Gb/s, 20us");
  REQUIRE(l);
  CHECK(l->bytes_per_s == doctest::Approx(12.5e9));
  CHECK(l->latency_s == doctest::Approx(20e-6));
  l = parse_link("1.25GB/s,0.5ms");
  REQUIRE(l);
  CHECK(l->bytes_per_s == doctest::Approx(1.25e9));
  CHECK(l->latency_s == doctest::Approx(5e-4));
  CHECK_FALSE(parse_link("fast"));
  CHECK_FALSE(parse_link("10Gbps,50"));  // a latency needs its unit
  CHECK_FALSE(parse_link("0Gbps"));
  CHECK_FALSE(parse_link("10Gbps,1ms,2ms"));
}

TEST_CASE("stages are contiguous, in proportion to the hosts' budgets, and cover the model once") {
  // Units: emb 40,000, 6 blocks of 40,400, head 40,000. Budgets 300,000 : 100,000 — a takes emb +
  // 5 blocks (242,000 = 80.7 % of its budget), b block 5 + the head (80,400 = 80.4 %); one block
  // fewer on a puts b at 121 %, one more puts a at 94 %: this is the smallest largest share.
  const Model m = blocks_model(6, false);
  PipelineRequest req = request("a=cpu:300KB;b=cpu:100KB");
  auto p = plan_pipeline(m, req);
  REQUIRE_MESSAGE(p, p.error().message());
  REQUIRE(p->stages.size() == 2);
  CHECK(p->stages[0].units.front() == "emb");
  CHECK(p->stages[0].units.back() == "layers.4");
  CHECK(p->stages[1].units.front() == "layers.5");
  CHECK(p->stages[1].units.back() == "head");
  CHECK(p->stages[0].weights == 40000 + 5 * 40400);
  CHECK(p->stages[1].weights == 40400 + 40000);
  // Each host's map names only its own modules, and together they place every tensor once.
  DeviceMap all;
  for (const auto& st : p->stages)
    for (const auto& e : st.plan.device_map) all.push_back(e);
  CHECK(check_device_map(m.tree, all));
  CHECK(keys(p->stages[1].plan.device_map).count("emb") == 0);
  // Equal budgets: 3 + 5 units would put 161,200 B on a vs 161,200 B on b: emb + 3 blocks | 3 blocks + head.
  p = plan_pipeline(m, request("a=cpu:1MB;b=cpu:1MB"));
  REQUIRE(p);
  CHECK(p->stages[0].weights == 40000 + 3 * 40400);
  CHECK(p->stages[1].weights == 3 * 40400 + 40000);
}

TEST_CASE("a tied head on another host is that host's own copy") {
  const Model m = blocks_model(2, true);  // emb 40,000 | 2 × 40,400 | head tied (0 in one piece)
  auto p = plan_pipeline(m, request("a=cpu:1MB;b=cpu:1MB"));
  REQUIRE_MESSAGE(p, p.error().message());
  REQUIRE(p->stages.size() == 2);
  CHECK(p->stages[1].units.back() == "head");
  // b's own plan sizes the head: 40,000 B, on top of its block(s).
  double b_bytes = 0;
  for (const auto& [k, v] : p->stages[1].plan.bytes_per_device) b_bytes += v;
  CHECK(b_bytes == doctest::Approx(static_cast<double>(p->stages[1].weights) + 40000));
  bool noted = false;
  for (const auto& line : p->explain) noted = noted || line.find("head.weight is tied to emb.weight") != std::string::npos;
  CHECK(noted);
}

TEST_CASE("bad splits are refused by name") {
  const Model m = blocks_model(1, false);  // 3 units
  auto p = plan_pipeline(m, request("a=cpu:1MB;b=cpu:1MB;c=cpu:1MB;d=cpu:1MB"));
  REQUIRE_FALSE(p);
  CHECK(p.error().message().find("4 nodes, but the model has only 3 placement units") != std::string::npos);
  p = plan_pipeline(m, request("a=cpu:1MB;b=disk:1TB"));
  REQUIRE_FALSE(p);
  CHECK(p.error().message().find("node 'b' budgets nothing but disk") != std::string::npos);
  // A host too small without disk: its own planner's error, prefixed with the host.
  PipelineRequest req = request("a=cpu:1MB;b=cpu:10KB");
  req.plan.no_disk = true;
  p = plan_pipeline(m, req);
  REQUIRE_FALSE(p);
  CHECK_MESSAGE(p.error().message().rfind("node 'b' (", 0) == 0, p.error().message());
}

TEST_CASE("speed: each stage a memory-bound step, the link per boundary, GPipe micro-batches") {
  // Two hosts with one named GPU each, everything resident: step = stage bytes ÷ the GPU's
  // datasheet bandwidth. No config: no hidden size, so the link carries nothing but latency.
  const Model m = blocks_model(6, false);
  PipelineRequest req = request("a=0:1MB,cpu:1MB,gpu:H100 SXM;b=0:1MB,cpu:1MB,gpu:RTX 4090");
  req.link.latency_s = 1e-4;
  auto p = plan_pipeline(m, req);
  REQUIRE_MESSAGE(p, p.error().message());
  const double h100 = find_gpu("H100 SXM").bandwidth_bytes_s, rtx = find_gpu("RTX 4090").bandwidth_bytes_s;
  CHECK(p->stages[0].step_s == doctest::Approx(p->stages[0].weights / h100));
  CHECK(p->stages[1].step_s == doctest::Approx(p->stages[1].weights / rtx));
  // One boundary (latency) + the sampled id back to the first host (latency + 8 B).
  CHECK(p->link_s == doctest::Approx(2e-4 + 8 / req.link.bytes_per_s));
  CHECK(p->decode_tokens_per_s == doctest::Approx(1 / (p->stages[0].step_s + p->stages[1].step_s + p->link_s)));
  CHECK(p->micro_batches == 1);
  // Balanced by speed instead: the faster H100 takes the larger share.
  req.balance = Balance::kCompute;
  auto q = plan_pipeline(m, req);
  REQUIRE(q);
  CHECK(q->stages[0].weights > q->stages[1].weights);
  CHECK(std::max(q->stages[0].step_s, q->stages[1].step_s) <=
        std::max(p->stages[0].step_s, p->stages[1].step_s) + 1e-15);
  // Batch 4 over 2 stages: 2 micro-batches; weights are read once per micro-batch per stage.
  req.balance = Balance::kMemory;
  req.plan.batch = 4;
  auto g = plan_pipeline(m, req);
  REQUIRE(g);
  CHECK(g->micro_batches == 2);
  const double busiest = std::max(g->stages[0].micro_step_s, g->stages[1].micro_step_s);
  const double trip = g->stages[0].micro_step_s + g->stages[1].micro_step_s + 2e-4 + 2 * 8 / req.link.bytes_per_s;
  CHECK(g->pipelined_tokens_per_s == doctest::Approx(4 / std::max(2 * busiest, trip)));
}

TEST_CASE("a real config: hidden states per boundary, KV cache with its layers, every tensor placed once") {
  auto ref = memfit::test::reference_dir();
  if (!ref) {
    memfit::test::skip_loudly("reference data: Llama 3.1 8B config for the multi-node plan");
    return;
  }
  const std::string cfg = *ref + "/real-hub/meta-llama--Meta-Llama-3.1-8B/config.json";
  const auto config = nlohmann::json::parse(memfit::test::read_text(cfg));
  EstimateRequest er;
  er.config_text = memfit::test::read_text(cfg);
  auto m = build_model(er);
  REQUIRE_MESSAGE(m, m.error().message());
  PipelineRequest req = request("a=0:12GiB,cpu:32GiB;b=0:8GiB,cpu:16GiB;c=0:8GiB,cpu:16GiB");
  req.plan.strategy = Strategy::kFit;
  req.plan.dtype = DType::kBF16;
  req.plan.context = 4096;
  auto p = plan_pipeline(*m, req);
  REQUIRE_MESSAGE(p, p.error().message());
  REQUIRE(p->stages.size() == 3);
  CHECK(p->hidden == config["hidden_size"].get<std::int64_t>());
  CHECK(p->activation_dtype == "bfloat16");
  CHECK(p->bytes_per_boundary == config["hidden_size"].get<std::uint64_t>() * 2);
  CHECK(p->bytes_per_token == 2 * p->bytes_per_boundary);
  // The KV cache goes with its layers: 32 layers × 2 (K, V) × 8 KV heads × 128 × 4096 tokens × 2 B.
  std::uint64_t kv = 0;
  for (const auto& st : p->stages) kv += st.kv_cache;
  const std::uint64_t layers = config["num_hidden_layers"], kv_heads = config["num_key_value_heads"];
  const std::uint64_t head_dim = config["hidden_size"].get<std::uint64_t>() / config["num_attention_heads"].get<std::uint64_t>();
  CHECK(kv == layers * 2 * kv_heads * head_dim * 4096 * 2);
  DeviceMap all;
  for (const auto& st : p->stages)
    for (const auto& e : st.plan.device_map) all.push_back(e);
  const TensorTree tree = for_era(m->tree, false);
  auto covered = check_device_map(tree, all);
  CHECK_MESSAGE(static_cast<bool>(covered), (covered ? std::string() : covered.error().message()));
  const auto j = pipeline_to_json(*p);
  CHECK(j["nodes"].size() == 3);
  CHECK(j["nodes"][0]["plan"]["strategy"] == "fit");
}
