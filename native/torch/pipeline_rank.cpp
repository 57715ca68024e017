#include "pipeline_rank.h"

#include <csignal>
#include <chrono>
#include <deque>
#include <optional>

#include <c10/util/Exception.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "failure.h"
#include "memfit/plan/strategy.h"
#include "weight_store.h"

namespace memfit::torchrt {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// A step message's header, int64, before its ids and hidden states (pipeline_rank.h).
enum Op : std::int64_t { kStop = 0, kStep = 1 };
enum StepField { kOp, kPrompt, kTokens, kStepHeader };
// The line-up: [prompts, hidden size, hidden dtype], then each prompt's length, then each capacity.
enum LineUpField { kPrompts, kHidden, kDtype, kLineUpHeader };

struct LineUp {
  std::int64_t hidden = 0;
  at::ScalarType dtype = at::kFloat;
  std::vector<std::int64_t> lengths, capacities;  // per prompt
  // Bytes of message `m` (0-based) from the rank that sent this line-up: the prefills first, in
  // prompt order, then one token per step (and "stop", as large).
  std::int64_t message_bytes(std::size_t m) const {
    const std::int64_t t = m < lengths.size() ? lengths[m] : 1;
    return static_cast<std::int64_t>(kStepHeader * sizeof(std::int64_t)) +
           t * static_cast<std::int64_t>(sizeof(std::int64_t) + hidden * at::elementSize(dtype));
  }
};

at::Tensor as_bytes(const at::Tensor& t) { return t.contiguous().view(-1).view(at::kByte); }

// One step's message: header, ids [1, T], hidden [1, T, H], as one byte buffer on `hidden`'s device.
at::Tensor pack_step(std::int64_t prompt, const at::Tensor& ids, const at::Tensor& hidden) {
  const at::Tensor header = at::tensor(std::vector<std::int64_t>{kStep, prompt, ids.size(1)}, at::kLong);
  return at::cat({as_bytes(header.to(hidden.device())), as_bytes(ids.to(hidden.device())), as_bytes(hidden)});
}

struct Step {
  std::int64_t op = kStop, prompt = 0, tokens = 0;
  at::Tensor ids, hidden;  // [1, T] int64, [1, T, H]
};

Step unpack_step(const at::Tensor& message, const LineUp& from) {
  const std::int64_t head = kStepHeader * sizeof(std::int64_t);
  const at::Tensor h = message.narrow(0, 0, head).view(at::kLong).to(at::kCPU);
  Step s;
  s.op = h[kOp].item<std::int64_t>();
  if (s.op == kStop) return s;
  s.prompt = h[kPrompt].item<std::int64_t>();
  s.tokens = h[kTokens].item<std::int64_t>();
  const std::int64_t ids_bytes = s.tokens * static_cast<std::int64_t>(sizeof(std::int64_t));
  s.ids = message.narrow(0, head, ids_bytes).view(at::kLong).view({1, s.tokens});
  s.hidden = message.narrow(0, head + ids_bytes, s.tokens * from.hidden * static_cast<std::int64_t>(at::elementSize(from.dtype)))
                 .view(from.dtype)
                 .view({1, s.tokens, from.hidden});
  return s;
}

// The next rank down the line: the line-up goes out before the first step, when this rank's hidden
// size and dtype are known.
class Downstream {
 public:
  Downstream(ProcessGroupLink& link, int to, std::vector<std::int64_t> lengths, std::vector<std::int64_t> capacities)
      : link_(link), to_(to) {
    line_up_.lengths = std::move(lengths);
    line_up_.capacities = std::move(capacities);
  }
  void step(std::int64_t prompt, const at::Tensor& ids, const at::Tensor& hidden) {
    if (!announced_) announce(hidden);
    link_.send(pack_step(prompt, ids, hidden), to_, "step");
    ++sent_;
  }
  void stop() {
    // Only after every prefill: "stop" has a one-token step's size (all zeros: op kStop).
    link_.send(at::zeros({line_up_.message_bytes(sent_)}, at::kByte), to_, "stop");
  }

 private:
  void announce(const at::Tensor& hidden) {
    line_up_.hidden = hidden.size(2);
    line_up_.dtype = hidden.scalar_type();
    const auto n = static_cast<std::int64_t>(line_up_.lengths.size());
    link_.send(at::tensor(std::vector<std::int64_t>{n, line_up_.hidden, static_cast<std::int64_t>(line_up_.dtype)}),
               to_, "line-up");
    std::vector<std::int64_t> sizes = line_up_.lengths;
    sizes.insert(sizes.end(), line_up_.capacities.begin(), line_up_.capacities.end());
    link_.send(at::tensor(sizes), to_, "line-up");
    announced_ = true;
  }
  ProcessGroupLink& link_;
  int to_;
  LineUp line_up_;
  bool announced_ = false;
  std::size_t sent_ = 0;
};

LineUp receive_line_up(ProcessGroupLink& link, int from) {
  const at::Tensor h = link.recv({kLineUpHeader}, at::kLong, from, "line-up").to(at::kCPU);
  const std::int64_t n = h[kPrompts].item<std::int64_t>();
  const at::Tensor sizes = link.recv({2 * n}, at::kLong, from, "line-up").to(at::kCPU).contiguous();
  const std::int64_t* p = sizes.data_ptr<std::int64_t>();
  LineUp l;
  l.hidden = h[kHidden].item<std::int64_t>();
  l.dtype = static_cast<at::ScalarType>(h[kDtype].item<std::int64_t>());
  l.lengths.assign(p, p + n);
  l.capacities.assign(p + n, p + 2 * n);
  return l;
}

nlohmann::json stats_json(const RankStats& r) {
  return {{"rank", r.rank}, {"decode_forward_s", r.decode_forward_seconds}, {"decode_steps", r.decode_steps},
          {"recv_wait_s", r.link.recv_seconds}, {"send_wait_s", r.link.send_seconds},
          {"messages_sent", r.link.messages_sent}, {"bytes_sent", r.link.bytes_sent}};
}

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
    // What the others print as why they stop: a failed load says so (they may still be loading).
    const bool own = message.rfind(me, 0) == 0;
    link_->report_failure(loading_ ? fmt::format("rank {} failed to load: {}", rank(), own ? message.substr(me.size()) : message)
                                   : message);
    // Rank 0 holds the store: it stays until the others have read why (they may be loading).
    if (rank() == 0 && !generating_) link_->let_others_read_failures(std::chrono::seconds(args_.pipeline.load_timeout));
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
      loading_ = true;
      return s;
    });
  };
}

void PipelineRank::loaded(const ExecSetup& setup) {
  loading_ = false;  // this rank's load is done; a failure now is another's or the wait's
  reporting([&] {
    if (link_->uses_cuda()) link_->set_device(setup.model->exec_device);
    link_->barrier("loaded", std::chrono::seconds(args_.pipeline.load_timeout));
    generating_ = true;
  });
}

void PipelineRank::publish_stats(const RankStats& mine) { link_->put("stats", stats_json(mine).dump()); }

PipelineRun PipelineRank::generate(ExecSetup& setup, const std::vector<GenerateRequest>& reqs) {
  return reporting([&] {
    Executor& exec = *setup.exec;
    const int last = link_->size() - 1;
    const std::size_t n = reqs.size();
    std::vector<Decoding> decoding;
    decoding.reserve(n);
    std::vector<ForwardState> states(n);
    std::vector<std::int64_t> lengths, capacities;
    for (std::size_t k = 0; k < n; ++k) {
      decoding.emplace_back(reqs[k]);
      states[k].use_cache = true;
      states[k].capacity = static_cast<std::int64_t>(reqs[k].prompt.size()) + reqs[k].max_new_tokens;
      lengths.push_back(static_cast<std::int64_t>(reqs[k].prompt.size()));
      capacities.push_back(states[k].capacity);
    }
    Downstream down(*link_, 1, lengths, capacities);
    RankStats mine;
    std::vector<ExecStats> before(n), after(n);
    std::vector<Clock::time_point> sent(n);
    std::deque<std::size_t> in_flight;  // prompts whose step is down the line, in the order sent
    // Runs prompt k's next step through this stage and sends it on; its id comes back later.
    auto launch = [&](std::size_t k) {
      sent[k] = Clock::now();
      before[k] = exec.stats();
      exec.forward(decoding[k].input(), &states[k]);
      after[k] = exec.stats();
      if (!decoding[k].result().new_ids.empty()) {
        mine.decode_forward_seconds += since(sent[k]);
        ++mine.decode_steps;
      }
      down.step(static_cast<std::int64_t>(k), decoding[k].input(), states[k].hidden);
      in_flight.push_back(k);
    };
    for (std::size_t k = 0; k < n; ++k) launch(k);  // the prefills first, in prompt order (pipeline_rank.h)
    double decode_latency = 0;
    while (!in_flight.empty()) {
      const std::size_t k = in_flight.front();
      in_flight.pop_front();
      const at::Tensor back = link_->recv({2}, at::kLong, last, "sampled token").to(at::kCPU);
      if (back[0].item<std::int64_t>() != static_cast<std::int64_t>(k))
        throw Failure{FailureKind::kInternal, fmt::format("rank 0: the id for prompt {} came back for prompt {}", k,
                                                          back[0].item<std::int64_t>())};
      const double seconds = since(sent[k]);
      if (!decoding[k].result().new_ids.empty()) decode_latency += seconds;
      decoding[k].accept(back[1].item<std::int64_t>(), seconds, before[k], after[k]);
      if (!decoding[k].done()) launch(k);
    }
    down.stop();
    link_->flush_sends();
    link_->barrier("done", std::chrono::seconds(args_.pipeline.timeout));
    PipelineRun run;
    for (const Decoding& d : decoding) run.results.push_back(d.result());
    mine.link = link_->stats();
    run.ranks.push_back(mine);
    double forwards = mine.decode_forward_seconds;
    for (int r = 1; r < link_->size(); ++r) {
      const std::string text = link_->get("stats", r);
      if (text.empty()) continue;
      const auto j = nlohmann::json::parse(text);
      RankStats o;
      o.rank = r;
      o.decode_forward_seconds = j["decode_forward_s"].get<double>();
      o.decode_steps = j["decode_steps"].get<int>();
      o.link.recv_seconds = j["recv_wait_s"].get<double>();
      o.link.send_seconds = j["send_wait_s"].get<double>();
      o.link.messages_sent = j["messages_sent"].get<std::uint64_t>();
      o.link.bytes_sent = j["bytes_sent"].get<std::uint64_t>();
      forwards += o.decode_forward_seconds;
      run.ranks.push_back(o);
    }
    if (n == 1 && mine.decode_steps > 0 && run.ranks.size() == static_cast<std::size_t>(link_->size()))
      run.link_seconds_per_token = (decode_latency - forwards) / mine.decode_steps;
    return run;
  });
}

void PipelineRank::serve(ExecSetup& setup, const PromptRequests& requests) {
  reporting([&] {
    Executor& exec = *setup.exec;
    const int from = rank() - 1, to = rank() + 1;
    const bool last = to == link_->size();
    const LineUp in = receive_line_up(*link_, from);
    const std::size_t n = in.lengths.size();
    std::optional<Downstream> down;
    if (!last) down.emplace(*link_, to, in.lengths, in.capacities);
    std::vector<ForwardState> states(n);
    std::vector<GenerateRequest> reqs(n);
    std::vector<std::vector<std::int64_t>> seen(n);  // per prompt, every id fed so far: the repetition penalty reads them
    RankStats mine;
    mine.rank = rank();
    for (std::size_t m = 0;; ++m) {
      const at::Tensor message = link_->recv({in.message_bytes(m)}, at::kByte, from, "step");
      const Step step = unpack_step(message, in);
      if (step.op == kStop) {
        if (down) down->stop();
        link_->flush_sends();
        mine.link = link_->stats();
        publish_stats(mine);
        link_->arrive("done");
        return;
      }
      const auto k = static_cast<std::size_t>(step.prompt);
      const bool prefill = m < n;
      if (k >= n || (prefill && k != m))
        throw Failure{FailureKind::kInternal, fmt::format("rank {}: message {} is a step of prompt {}, not of prompt {}",
                                                          rank(), m, step.prompt, prefill ? m : k)};
      ForwardState& s = states[k];
      if (prefill) {
        s.use_cache = true;
        s.capacity = in.capacities[k];
        if (last) reqs[k] = requests(k);
      }
      s.hidden = step.hidden.to(setup.model->exec_device, setup.options.compute_dtype);
      const auto t0 = Clock::now();
      const at::Tensor logits = exec.forward(step.ids, &s);
      if (!prefill) {
        mine.decode_forward_seconds += since(t0);
        ++mine.decode_steps;
      }
      if (down) {
        down->step(step.prompt, step.ids, s.hidden);
        continue;
      }
      const at::Tensor row = step.ids[0].to(at::kCPU).contiguous();
      seen[k].insert(seen[k].end(), row.data_ptr<std::int64_t>(), row.data_ptr<std::int64_t>() + row.numel());
      const std::int64_t next = choose_next(reqs[k], logits, seen[k]);
      link_->send(at::tensor(std::vector<std::int64_t>{step.prompt, next}), 0, "sampled token");
    }
  });
}

void serve_pipeline_rank(const GenerateArgs& args, const PromptRequests& requests) {
  PipelineRank pipe(args);
  std::optional<ExecSetup> setup;
  pipe.reporting([&] { setup.emplace(args.dir, args.placement, args.exec, pipe.picker()); });
  pipe.loaded(*setup);
  pipe.serve(*setup, requests);
}

}  // namespace memfit::torchrt
