// Placement and streaming: the same logits, bit for bit, whatever the device map (all CPU,
// CPU + disk, disk only, a user JSON map from a file or inline, a planner strategy), with and
// without prefetch, at any prefetch depth; and cpu_offload_with_hook semantics for a pipeline.
#include <doctest/doctest.h>

#include <dlfcn.h>

#include <ATen/Parallel.h>

#include <fstream>
#include <set>
#include <thread>

#include "support/reference.h"
#include "compute_threads.h"
#include "torch_test_support.h"

namespace memfit::test {
namespace {

const char* kGpt2Mixed =
    R"({"transformer.wte": "cpu", "transformer.wpe": "disk", "transformer.h.0": "cpu",
        "transformer.h.1": "disk", "transformer.h.2": "disk", "transformer.h.3": "cpu",
        "transformer.ln_f": "disk", "lm_head": "cpu"})";
const char* kLlamaMixed =
    R"({"model.embed_tokens": "disk", "model.layers.0": "cpu", "model.layers.1": "disk",
        "model.layers.2": "cpu", "model.layers.3": "disk", "model.norm": "cpu", "lm_head": "disk"})";

struct Case {
  const char* weights;
  const char* mixed_map;
};

std::uint64_t disk_bytes(const Loaded& m) { return m.model->stats.disk_bytes; }

// Bytes one forward streams with every weight on disk: each weight once, except that the
// embedding stage reads only the rows of the distinct input ids, and GPT-2's head reads its tied
// wte whole again.
std::uint64_t expected_streamed(const Loaded& m, const std::string& model, const at::Tensor& ids) {
  const bool gpt2 = model == "tiny-gpt2";
  const torchrt::StoredWeight* e = m.model->find(gpt2 ? "transformer.wte.weight" : "model.embed_tokens.weight");
  REQUIRE(e);
  const auto* id = ids.data_ptr<std::int64_t>();
  const std::set<std::int64_t> distinct(id, id + ids.numel());
  const std::uint64_t rows = distinct.size() * (e->nbytes / static_cast<std::uint64_t>(e->tensor.size(0)));
  return disk_bytes(m) - (gpt2 ? 0 : e->nbytes) + rows;
}

}  // namespace

TEST_CASE("placement: logits are bitwise identical resident, CPU + disk, disk only, user maps, prefetch on/off") {
  const auto dir = golden_dir();
  if (!dir) return skip_loudly("placement bitwise equality");
  TempDir tmp;
  const Case cases[] = {{"tiny-gpt2", kGpt2Mixed}, {"tiny-gpt2/sharded", kGpt2Mixed},
                        {"tiny-llama", kLlamaMixed}, {"tiny-llama/sharded", kLlamaMixed},
                        {"tiny-gpt2/bin-sharded", kGpt2Mixed}};
  for (const Case& c : cases) {
    CAPTURE(c.weights);
    const std::string w = *dir + "/" + c.weights;
    const std::string model = std::string(c.weights).substr(0, std::string(c.weights).find('/'));
    const auto ids = golden_input(golden_json(model), "C");
    const Loaded base = load(w);
    const at::Tensor expected = run(base, ids, {/*prefetch=*/false});
    const std::string map_file = tmp.path + "/map.json";
    std::ofstream(map_file) << c.mixed_map;

    const std::string maps[] = {R"({"": "cpu"})", R"({"": "disk"})", c.mixed_map, map_file};
    for (const std::string& map : maps) {
      CAPTURE(map);
      const Loaded m = load(w, map, "", std::nullopt, tmp.path + "/offload");  // .bin on disk: a folder
      if (map.find("disk") != std::string::npos || map == map_file) CHECK(disk_bytes(m) > 0);
      for (bool prefetch : {false, true})
        for (int depth : {1, 3}) {
          if (!prefetch && depth > 1) continue;
          CAPTURE(prefetch);
          CAPTURE(depth);
          torchrt::ExecOptions opt;
          opt.prefetch = prefetch;
          opt.prefetch_depth = depth;
          torchrt::Executor exec(*m.model, *m.program, opt);
          CHECK(bitwise_equal(exec.forward(ids), expected));
          if (map == R"({"": "disk"})") CHECK(exec.stats().streamed_bytes == expected_streamed(m, model, ids));
          // A second forward reuses the staging buffers: depth + 1 at most (1 without prefetch).
          CHECK(bitwise_equal(exec.forward(ids), expected));
          CHECK(exec.stats().staging_buffers <= static_cast<std::size_t>(prefetch ? depth + 1 : 1));
          CHECK((exec.stats().staging_buffers > 0) == (disk_bytes(m) > 0));
          // Stages are read one after another, never two at once (one sequential stream).
          CHECK(exec.stats().most_reads_at_once == (disk_bytes(m) > 0 ? 1u : 0u));
        }
    }
  }
}

TEST_CASE("executor: one compute thread fewer only while a prefetch thread reads disk weights on a CPU") {
  const auto dir = golden_dir();
  if (!dir) return skip_loudly("default compute threads");
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const Loaded resident = load(*dir + "/tiny-gpt2");
  const Loaded disk = load(*dir + "/tiny-gpt2", R"({"": "disk"})");
  torchrt::ExecOptions prefetch, naive;
  naive.prefetch = false;
  CHECK(torchrt::default_compute_threads(*resident.model, prefetch) == cores);
  CHECK(torchrt::default_compute_threads(*disk.model, naive) == cores);
  CHECK(torchrt::default_compute_threads(*disk.model, prefetch) == (cores > 1 ? cores - 1 : 1));
}

TEST_CASE("compute threads go to OpenBLAS's own pool where LibTorch calls a threaded OpenBLAS, else to ATen's") {
  using Get = int (*)();
  const auto parallel = reinterpret_cast<Get>(::dlsym(RTLD_DEFAULT, "openblas_get_parallel"));
  const auto blas_threads = reinterpret_cast<Get>(::dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  const bool own_pool = parallel && parallel() == 1;
  const std::string pool = own_pool ? "yes" : "no";
  MESSAGE("OpenBLAS with its own threads: " << pool);
  const int before = at::get_num_threads();
  for (int n : {1, 2, 3}) {
    CAPTURE(n);
    const torchrt::ComputeThreads split = torchrt::apply_compute_threads(n);
    CHECK(split.aten == (own_pool ? 1 : n));
    CHECK(split.blas == (own_pool ? n : 0));
    CHECK(at::get_num_threads() == split.aten);
    if (own_pool) CHECK(blas_threads() == n);
  }
  at::set_num_threads(before);
}

TEST_CASE("executor: with prefetch_next_forward off, repeated forwards give the same bits and bytes") {
  const auto dir = golden_dir();
  if (!dir) return skip_loudly("prefetch_next_forward");
  const auto ids = golden_input(golden_json("tiny-gpt2"), "C");
  const Loaded base = load(*dir + "/tiny-gpt2");
  const at::Tensor expected = run(base, ids, {/*prefetch=*/false});
  const Loaded disk = load(*dir + "/tiny-gpt2", R"({"": "disk"})");
  torchrt::ExecOptions opt;
  opt.prefetch_next_forward = false;
  torchrt::Executor exec(*disk.model, *disk.program, opt);
  CHECK(bitwise_equal(exec.forward(ids), expected));
  const auto once = exec.stats().streamed_bytes;
  CHECK(bitwise_equal(exec.forward(ids), expected));
  CHECK(exec.stats().streamed_bytes == 2 * once);
}

TEST_CASE("placement: a planner strategy with a small CPU budget offloads the rest to disk, same bits") {
  const auto dir = golden_dir();
  if (!dir) return skip_loudly("planner placement");
  const std::string w = *dir + "/tiny-llama";
  const auto ids = golden_input(golden_json("tiny-llama"), "B");
  const at::Tensor expected = run(load(w), ids);
  torchrt::LoadRequest req;
  req.checkpoint = w;
  req.device_map = "sequential";
  req.max_memory = "cpu=700KB";  // the largest layer (256 KB) is reserved on the CPU
  auto model = torchrt::load_model(torchrt::make_load_plan(req, torchrt::device_inventory()));
  CHECK(model->stats.disk_bytes > 0);
  CHECK(model->stats.cpu_bytes > 0);
  const auto program = torchrt::make_program(model->plan.model_type, model->plan.model, model->plan.tree);
  torchrt::Executor exec(*model, *program);
  CHECK(bitwise_equal(exec.forward(ids), expected));
}

TEST_CASE("placement: --dtype float16 weights, resident or on disk, give the same bits") {
  const auto dir = golden_dir();
  if (!dir) return skip_loudly("--dtype float16 placement");
  // fp32 file → float16 in memory: the cast happens at load (resident) or at fetch (disk).
  const std::string w = *dir + "/tiny-gpt2";
  const auto ids = golden_input(golden_json("tiny-gpt2"), "A");
  const Loaded resident = load(w, "", "", DType::kF16);
  CHECK((resident.model->find("transformer.h.0.mlp.c_fc.weight")->tensor.scalar_type() == at::kHalf));
  const at::Tensor expected = run(resident, ids);
  TempDir tmp;
  for (const char* map : {R"({"": "disk"})", kGpt2Mixed}) {
    CAPTURE(map);
    CHECK(bitwise_equal(run(load(w, map, "", DType::kF16), ids), expected));
    // The .bin of the same weights: disk tensors go to an offload folder, in float16.
    CHECK(bitwise_equal(run(load(*dir + "/tiny-gpt2/bin", map, "", DType::kF16, tmp.path + "/off"), ids), expected));
  }
  // And it is close to the float16 file upcast (the same rounding as save in float16).
  const auto golden = golden_json("tiny-gpt2");
  CHECK(compare_to_golden(expected, golden["logits"]["fp16_upcast_fp32"]["A"]).max_abs <= 1e-4);
}

TEST_CASE("cpu_offload_with_hook: a model stays resident until the next model of the pipeline runs") {
  const auto dir = golden_dir();
  if (!dir) return skip_loudly("offload hooks");
  const Loaded gpt2 = load(*dir + "/tiny-gpt2", R"({"": "disk"})");
  const Loaded llama = load(*dir + "/tiny-llama", R"({"": "disk"})");
  const auto ids = golden_input(golden_json("tiny-gpt2"), "A");
  const at::Tensor gpt2_expected = run(gpt2, ids);
  const at::Tensor llama_expected = run(llama, ids);

  torchrt::OffloadHook first(*gpt2.model);
  torchrt::OffloadHook second(*llama.model, &first);
  first.pre_forward();
  CHECK(first.on_device());
  {
    torchrt::Executor exec(first.resident_model(), *gpt2.program);
    CHECK(bitwise_equal(exec.forward(ids), gpt2_expected));
    CHECK(exec.stats().streamed_bytes == 0);  // resident: nothing streamed
  }
  first.pre_forward();  // a second call keeps it (no reload)
  CHECK(first.on_device());
  second.pre_forward();  // the next model's hook offloads the first
  CHECK_FALSE(first.on_device());
  CHECK(second.on_device());
  torchrt::Executor exec(second.resident_model(), *llama.program);
  CHECK(bitwise_equal(exec.forward(ids), llama_expected));
  second.offload();
  CHECK_FALSE(second.on_device());
}

}  // namespace memfit::test
