#include "pipeline_rank.h"

#include <csignal>
#include <optional>

#include <c10/util/Exception.h>
#include <fmt/format.h>

#include "failure.h"
#include "memfit/plan/strategy.h"
#include "weight_store.h"

namespace memfit::torchrt {
namespace {

// A step's header, int64: what follows it from the previous rank.
enum Op : std::int64_t { kStop = 0, kFirst = 1, kNext = 2 };  // kFirst: a new sequence (fresh KV cache)
enum HeaderField { kOp, kBatch, kTokens, kHidden, kCapacity, kDtype, kHeaderSize };

GroupOptions group_options(const GenerateArgs& a) {
  const PipelineArgs& p = a.pipeline;
  if (p.nodes < 2) throw Failure{FailureKind::kUsage, fmt::format("--nodes {}: a pipeline has 2 ranks or more", p.nodes)};
  if (p.rank < 0 || p.rank >= p.nodes)
    throw Failure{FailureKind::kUsage, fmt::format("--rank: give this process's rank, 0 … {} (--nodes {})", p.nodes - 1, p.nodes)};
  const std::size_t colon = p.master.rfind(':');
  char* end = nullptr;
  const long port = colon == std::string::npos ? 0 : std::strtol(p.master.c_str() + colon + 1, &end, 10);
  if (colon == std::string::npos || colon == 0 || *end != '\0' || port < 1 || port > 65535)
    throw Failure{FailureKind::kUsage,
                  fmt::format("--master: '{}' is not HOST:PORT (rank 0's address, a port 1 … 65535)", p.master)};
  GroupOptions o;
  o.rank = p.rank;
  o.size = p.nodes;
  o.host = p.master.substr(0, colon);
  o.port = static_cast<int>(port);
  o.timeout = std::chrono::seconds(p.timeout);
  o.backend = p.backend;
  return o;
}

// The generation options every rank must share: the last rank samples with them.
std::string shared_options(const GenerateArgs& a) {
  return fmt::format("greedy={} temperature={} top_k={} top_p={} repetition_penalty={} seed={} backend={}", a.greedy,
                     a.temperature, a.top_k, a.top_p, a.repetition_penalty, a.seed, a.pipeline.backend);
}

// Budgets for a planner strategy inside a stage: --max-memory, or what this host has free.
plan::MaxMemory stage_budgets(const PlacementArgs& p, bool strategy) {
  if (!p.max_memory.empty()) return value_or_raise(plan::parse_max_memory(p.max_memory));
  if (!strategy) return {{plan::Device::cpu(), std::uint64_t{1} << 60}};  // the split alone: bytes, not budgets
  const DeviceInventory inv = device_inventory();
  std::vector<std::pair<plan::Device, std::uint64_t>> entries;
  for (std::size_t i = 0; i < inv.gpu_free_bytes.size(); ++i)
    entries.emplace_back(plan::Device::gpu(static_cast<int>(i)), inv.gpu_free_bytes[i]);
  entries.emplace_back(plan::Device::cpu(), inv.cpu_available_bytes);
  return value_or_raise(plan::normalize_max_memory(std::move(entries)));
}

}  // namespace

PipelineRank::PipelineRank(const GenerateArgs& args)
    : args_(args), link_(std::make_unique<ProcessGroupLink>(group_options(args))) {
  // A write to a rank that has died fails with EPIPE, which becomes an error naming it — rather
  // than SIGPIPE ending this process without a word.
  std::signal(SIGPIPE, SIG_IGN);
}

PipelineRank::~PipelineRank() = default;

void PipelineRank::rethrow_named() {
  const std::string me = fmt::format("rank {}: ", rank());
  auto named = [&](FailureKind kind, std::string message) {
    if (message.rfind("rank ", 0) != 0) message = me + message;
    link_->report_failure(message);
    if (rank() == 0 && !generating_) link_->let_others_read_failures(std::chrono::seconds(5));
    return Failure{kind, message};
  };
  try {
    throw;
  } catch (const Failure& e) {
    throw named(e.kind, e.message);
  } catch (const Error& e) {
    throw named(failure_kind(e.code()), e.message());
  } catch (const c10::Error& e) {
    throw named(FailureKind::kInternal, e.what_without_backtrace());
  } catch (const std::exception& e) {
    throw named(FailureKind::kInternal, e.what());
  }
}

StagePicker PipelineRank::picker() {
  return [this](const LoadPlan& lp) {
    return reporting([&] {
      const PlacementArgs& place = args_.placement;
      const auto program = make_program(lp.model_type, lp.model, lp.tree);
      const auto strategy = plan::strategy_from_name(place.device_map);
      std::optional<PlannedStages> planned;
      if (strategy || args_.pipeline.stages.empty())
        planned = plan_stages(lp, *program, link_->size(), rank(), stage_budgets(place, strategy.has_value()),
                              strategy.value_or(plan::Strategy::kSequential));
      const std::int64_t blocks = static_cast<std::int64_t>(program->stages().size()) - 2;
      split_ = args_.pipeline.stages.empty() ? planned->split
                                             : parse_stages(args_.pipeline.stages, link_->size(), blocks);
      StageSelection s = select_stage(*program, split_, rank());
      if (strategy) {
        if (planned->split.text() != split_.text())
          throw Failure{FailureKind::kUsage,
                        fmt::format("--device-map {} plans the stages as {}, not --stages {}: give a JSON map per rank "
                                    "with --stages", place.device_map, planned->split.text(), split_.text())};
        cover_tied_weights(planned->rank_map, lp.tree, s.tensors);
        s.device_map = planned->rank_map;
        s.device_map_origin = fmt::format("{} (pipeline stage {})", place.device_map, rank());
      }
      link_->check_same(stage_fingerprint(lp, split_, link_->size(), shared_options(args_)));
      link_->connect();
      return s;
    });
  };
}

void PipelineRank::loaded(const ExecSetup& setup) {
  reporting([&] {
    if (link_->uses_cuda()) link_->set_device(setup.model->exec_device);
    link_->barrier("loaded", std::chrono::seconds(args_.pipeline.load_timeout));
    generating_ = true;
  });
}

GenerateResult PipelineRank::generate(ExecSetup& setup, const GenerateRequest& req) {
  return reporting([&] {
    Executor& exec = *setup.exec;
    const int next_rank = 1, last = link_->size() - 1;
    ForwardState s;
    s.use_cache = true;
    s.capacity = static_cast<std::int64_t>(req.prompt.size()) + req.max_new_tokens;
    std::int64_t op = kFirst;
    auto step = [&](const at::Tensor& input, const std::vector<std::int64_t>&) {
      exec.forward(input, &s);
      const at::Tensor header = at::tensor(std::vector<std::int64_t>{op, input.size(0), input.size(1), s.hidden.size(2),
                                                                     s.capacity, static_cast<std::int64_t>(s.hidden.scalar_type())});
      op = kNext;
      link_->send(header, next_rank, "step header");
      link_->send(input, next_rank, "token ids");
      link_->send(s.hidden, next_rank, "hidden states");
      return link_->recv({1}, at::kLong, last, "sampled token").item<std::int64_t>();
    };
    GenerateResult r = generate_steps(req, step, [&] { return exec.stats(); });
    link_->send(at::zeros({kHeaderSize}, at::kLong), next_rank, "stop");
    link_->barrier("done", std::chrono::seconds(args_.pipeline.timeout));
    return r;
  });
}

void PipelineRank::serve(ExecSetup& setup, const GenerateRequest& req) {
  reporting([&] {
    Executor& exec = *setup.exec;
    const int from = rank() - 1, to = rank() + 1;
    const bool last = to == link_->size();
    ForwardState s;
    std::vector<std::int64_t> seen;  // every id fed so far: the sampler's repetition penalty reads them
    while (true) {
      const at::Tensor header = link_->recv({kHeaderSize}, at::kLong, from, "step header");
      const std::int64_t* h = header.data_ptr<std::int64_t>();
      if (h[kOp] == kStop) {
        if (!last) link_->send(header, to, "stop");
        link_->arrive("done");
        return;
      }
      const at::Tensor ids = link_->recv({h[kBatch], h[kTokens]}, at::kLong, from, "token ids");
      const at::Tensor hidden = link_->recv({h[kBatch], h[kTokens], h[kHidden]},
                                            static_cast<at::ScalarType>(h[kDtype]), from, "hidden states");
      if (h[kOp] == kFirst) {
        s = ForwardState{};
        s.use_cache = true;
        s.capacity = h[kCapacity];
        seen.clear();
      }
      s.hidden = hidden.to(setup.model->exec_device, setup.options.compute_dtype);
      const at::Tensor logits = exec.forward(ids, &s);
      if (!last) {
        link_->send(header, to, "step header");
        link_->send(ids, to, "token ids");
        link_->send(s.hidden, to, "hidden states");
        continue;
      }
      const at::Tensor row = ids[0].to(at::kCPU).contiguous();
      seen.insert(seen.end(), row.data_ptr<std::int64_t>(), row.data_ptr<std::int64_t>() + row.numel());
      const std::int64_t next = choose_next(req, logits, seen);
      link_->send(at::tensor(std::vector<std::int64_t>{next}), 0, "sampled token");
    }
  });
}

void serve_pipeline_rank(const GenerateArgs& args, const GenerateRequest& sampling) {
  PipelineRank pipe(args);
  std::optional<ExecSetup> setup;
  pipe.reporting([&] { setup.emplace(args.dir, args.placement, args.exec, pipe.picker()); });
  pipe.loaded(*setup);
  pipe.serve(*setup, sampling);
}

}  // namespace memfit::torchrt
