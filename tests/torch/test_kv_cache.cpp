// The KV cache (issue 17, item 6): each layer's cache is preallocated in the model's dtype, a
// sliding layer holds its window and no more, and generation through it — past the window, by
// chunks and token by token — gives what a full forward without a cache gives at every step.
// The bytes it holds per layer are what memfit's planner (`plan --device-map fit`, via
// will_it_run) counts for the same model, dtype and context.
#include <doctest/doctest.h>

#include <algorithm>

#include "memfit/memory/kv_cache.h"
#include "memfit/memory/will_it_run.h"
#include "memfit/plan/plan.h"
#include "support/reference.h"
#include "tiny_decoder.h"
#include "torch_types.h"

namespace memfit::test {
namespace {

const TinyDims kDims;

// The window of each layer that slides, 0 for full attention (core's layout).
std::vector<std::int64_t> windows_of(const Loaded& m) {
  std::vector<std::int64_t> out;
  for (const AttentionLayer& l : attention_layout(m.model->plan.model).layers) out.push_back(l.sliding ? l.window : 0);
  return out;
}

double cache_bytes(const torchrt::ForwardState& s, std::size_t layer) {
  return static_cast<double>(s.keys.at(layer).nbytes() + s.values.at(layer).nbytes());
}

// Feeds `chunks` of ids (a prompt, then chunks or single tokens) through the cache and checks
// every position of each chunk against a full forward of the whole sequence so far.
void check_against_full(const Loaded& m, const at::Tensor& ids, const std::vector<std::int64_t>& chunks,
                        std::int64_t capacity) {
  torchrt::ExecOptions opt;
  opt.prefetch = false;
  torchrt::Executor exec(*m.model, *m.program, opt);
  torchrt::ForwardState s;
  s.use_cache = true;
  s.capacity = capacity;
  std::int64_t at = 0;
  for (const std::int64_t n : chunks) {
    CAPTURE(at);
    CAPTURE(n);
    const at::Tensor step = exec.forward(ids.narrow(1, at, n), &s);
    at += n;
    const at::Tensor full = exec.forward(ids.narrow(1, 0, at));
    check_close(step, full.narrow(1, at - n, n), 1e-4);
    CHECK(s.past == at);
  }
  // A full layer holds the capacity, or what it grew to (doubling) past it; a sliding one
  // holds its window once the context passed it.
  const std::vector<std::int64_t> windows = windows_of(m);
  REQUIRE(windows.size() == s.keys.size());
  for (std::size_t i = 0; i < s.keys.size(); ++i) {
    CAPTURE(i);
    const std::int64_t slots = s.keys[i].size(2);
    if (windows[i] > 0) CHECK(slots == std::min(windows[i], std::max(capacity, at)));
    else if (capacity >= at) CHECK(slots == capacity);
    else CHECK((slots >= at && slots < 2 * at));
    CHECK(s.values[i].sizes() == s.keys[i].sizes());
  }
}

}  // namespace

TEST_CASE("KV cache: past a sliding window, by chunks and token by token, logits equal the full forward's") {
  // Windows of 3 and 5 (Mistral, Mixtral, Gemma 2/3, Phi-3) and full layers: a prompt longer than
  // every window, a chunk of 3 once the ring has wrapped, then single tokens wrapping it again.
  const auto ids = tiny_ids(2, 20, kDims.vocab, 5);
  for_each_family(kDims, [&](const TinyFamily& f, const Loaded& m) {
    check_against_full(m, ids, {7, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 20);
    // A capacity below the window: the cache grows (doubling, up to the window) before it wraps.
    // Not Phi-3's: its LongRoPE switches factors past original_max_position_embeddings (4), and
    // keys cached before the switch keep the short ones (transformers' too), unlike a full forward.
    if (f.name != "phi3") check_against_full(m, ids, {1, 1, 1, 1, 2, 1, 1, 1, 4, 1}, 1);
  });
}

TEST_CASE("KV cache: a sliding layer holds its window, a full layer the context, in the model's dtype") {
  const auto families = tiny_families(kDims);
  const auto gemma2 = std::find_if(families.begin(), families.end(), [](const TinyFamily& f) { return f.name == "gemma2"; });
  REQUIRE(gemma2 != families.end());
  TempDir tmp;
  const Loaded m = load_tiny(tmp, gemma2->name, gemma2->weights, gemma2->config);
  torchrt::Executor exec(*m.model, *m.program);
  torchrt::ForwardState s;
  s.use_cache = true;
  s.capacity = 16;
  exec.forward(tiny_ids(1, 9, kDims.vocab), &s);
  REQUIRE(s.keys.size() == 3u);
  // Gemma2Config: layer_types alternate sliding (even) and full (odd) from layer 0.
  CHECK(s.keys[0].size(2) == 3);
  CHECK(s.keys[1].size(2) == 16);
  CHECK(s.keys[2].size(2) == 3);
  for (const at::Tensor& k : s.keys) CHECK((k.scalar_type() == m.model->dtype));
}

TEST_CASE("KV cache: the runtime holds, layer by layer, the bytes the planner counts") {
  constexpr std::int64_t kContext = 24;
  TempDir tmp;
  struct Case {
    std::string dir;
    std::optional<DType> dtype;  // --dtype; unset: the checkpoint's
  };
  std::vector<Case> cases;
  for (const TinyFamily& f : tiny_families(kDims)) {
    if (f.name != "mistral" && f.name != "gemma2" && f.name != "llama") continue;
    const std::string dir = tmp.path + "/" + f.name;
    write_checkpoint(dir, f.weights, f.config);
    cases.push_back({dir, std::nullopt});
    cases.push_back({dir, DType::kBF16});  // half weights a CPU computes in float32
  }
  // Half weights as stored (bf16 on disk), computed in float32 on the CPU: the cache stays bf16.
  if (const auto golden = golden_dir()) {
    cases.push_back({*golden + "/tiny-llama/bf16", std::nullopt});
    cases.push_back({*golden + "/tiny-gpt2/fp16", std::nullopt});
  } else {
    skip_loudly("KV cache bytes of the golden half checkpoints");
  }
  for (const Case& c : cases) {
    CAPTURE(c.dir);
    CAPTURE(c.dtype.has_value());
    const Loaded m = load(c.dir, "", "", c.dtype);
    torchrt::Executor exec(*m.model, *m.program);
    torchrt::ForwardState s;
    s.use_cache = true;
    s.capacity = kContext;
    exec.forward(tiny_ids(1, 5, kDims.vocab), &s);  // every vocabulary here has 96 ids or more

    RunOptions ro;
    ro.context = kContext;
    ro.batch = 1;
    if (c.dtype) ro.dtype = parse_weight_dtype(torch_name(*c.dtype), "dtype");
    const Result<RunReport> run = will_it_run(m.model->plan.model, ro);
    REQUIRE(run);
    const std::vector<double>& planned = run->inference.kv.layer_bytes;
    REQUIRE(planned.size() == s.keys.size());
    double total = 0;
    for (std::size_t i = 0; i < planned.size(); ++i) {
      CAPTURE(i);
      CHECK(cache_bytes(s, i) == planned[i]);
      total += cache_bytes(s, i);
    }
    // `plan --device-map fit` charges the same bytes to the GPU that holds the layers.
    plan::PlanRequest req;
    req.max_memory = {{plan::Device::gpu(0), std::uint64_t{1} << 40}, {plan::Device::cpu(), std::uint64_t{1} << 40}};
    req.strategy = plan::Strategy::kFit;
    req.dtype = c.dtype;
    req.context = kContext;
    req.batch = 1;
    const Result<plan::PlanResult> p = plan::run_plan(m.model->plan.model, req);
    REQUIRE(p);
    REQUIRE(p->fit);
    const auto gpu = std::find_if(p->fit->devices.begin(), p->fit->devices.end(),
                                  [](const plan::DeviceUse& d) { return d.device.is_gpu(); });
    REQUIRE(gpu != p->fit->devices.end());
    CHECK(static_cast<double>(gpu->kv_cache) == total);
    CHECK(total > 0);
  }
}

}  // namespace memfit::test
