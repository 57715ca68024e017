// api::inference — "will it run?" over JSON: the model fields of every request (api_common.h)
// plus context, batch, kv_dtype, engine, dtype, overhead, vram, gpu, attention, encoder_length
// and train {method, rank, targets, optimizer, grad_checkpointing, zero, fsdp, gpus}.
#include <algorithm>

#include <fmt/format.h>

#include "api_common.h"
#include "memfit/api/api.h"
#include "memfit/memory/gpu_catalog.h"
#include "memfit/memory/lora.h"
#include "memfit/report/run_report.h"

namespace memfit::api {
namespace {

const Json* field(const Json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

std::string text(const Json& j, const char* key, const char* where) {
  const Json* v = field(j, key);
  if (!v) return {};
  if (!v->is_string())
    throw Error(ErrorCode::kInvalidArgument, fmt::format("{}: '{}' must be a string", where, key));
  return v->get<std::string>();
}

std::optional<std::int64_t> integer(const Json& j, const char* key, const char* where) {
  const Json* v = field(j, key);
  if (!v) return std::nullopt;
  if (!v->is_number_integer())
    throw Error(ErrorCode::kInvalidArgument, fmt::format("{}: '{}' must be an integer", where, key));
  return v->get<std::int64_t>();
}

bool flag(const Json& j, const char* key, const char* where) {
  const Json* v = field(j, key);
  if (!v) return false;
  if (!v->is_boolean())
    throw Error(ErrorCode::kInvalidArgument, fmt::format("{}: '{}' must be true or false", where, key));
  return v->get<bool>();
}

// A size: a string ("24GiB") or a number of bytes.
std::optional<double> size(const Json& j, const char* key) {
  const Json* v = field(j, key);
  if (!v) return std::nullopt;
  if (v->is_number()) {
    const double b = v->get<double>();
    if (!(b >= 0)) throw Error(ErrorCode::kInvalidArgument, fmt::format("request: '{}' must not be negative", key));
    return b;
  }
  if (v->is_string()) return parse_memory_size(v->get<std::string>(), fmt::format("request: '{}'", key));
  throw Error(ErrorCode::kInvalidArgument, fmt::format("request: '{}' must be a size string or bytes", key));
}

// Unset fields keep TrainingOptions' defaults (memfit/memory/options.h), as the CLI's flags do.
TrainingOptions train_options(const Json& t) {
  constexpr const char* kWhere = "request: train";
  if (!t.is_object()) throw Error(ErrorCode::kInvalidArgument, "request: 'train' must be an object");
  TrainingOptions o;
  const std::string method = text(t, "method", kWhere);
  if (!method.empty()) o.method = parse_name(kTrainMethodNames, method, "train.method");
  if (auto r = integer(t, "rank", kWhere)) o.rank = *r;
  if (const Json* v = field(t, "targets")) {
    o.targets.clear();
    if (v->is_string()) {
      o.targets = parse_lora_targets(v->get<std::string>());
    } else if (v->is_array()) {
      for (const auto& x : *v) {
        if (!x.is_string()) throw Error(ErrorCode::kInvalidArgument, "request: train.targets must hold strings");
        o.targets.push_back(x.get<std::string>());
      }
    } else {
      throw Error(ErrorCode::kInvalidArgument, "request: train.targets must be a string or a list");
    }
  }
  const std::string opt = text(t, "optimizer", kWhere);
  if (!opt.empty()) o.optimizer = parse_name(kOptimizerNames, opt, "train.optimizer");
  o.grad_checkpointing = flag(t, "grad_checkpointing", kWhere);
  if (auto z = integer(t, "zero", kWhere)) o.zero_stage = static_cast<int>(std::clamp<std::int64_t>(*z, -1, 4));
  o.fsdp = flag(t, "fsdp", kWhere);
  if (auto g = integer(t, "gpus", kWhere)) o.gpus = *g;
  return o;
}

}  // namespace

std::string inference(const std::string& request_json) {
  return respond(request_json, [](const Json& j) {
    constexpr const char* kWhere = "request";
    const EstimateRequest model = model_request(j);
    RunOptions o;
    o.context = integer(j, "context", kWhere);
    if (auto b = integer(j, "batch", kWhere)) o.batch = *b;
    if (const std::string kv = text(j, "kv_dtype", kWhere); !kv.empty())
      o.kv_dtype = parse_name(kKvDtypeNames, kv, "kv_dtype");
    if (const std::string engine = text(j, "engine", kWhere); !engine.empty())
      o.engine = parse_name(kEngineNames, engine, "engine");
    if (const std::string dtype = text(j, "dtype", kWhere); !dtype.empty())
      o.dtype = parse_weight_dtype(dtype, "dtype");
    if (auto v = size(j, "overhead")) o.overhead_bytes = *v;
    o.vram_bytes = size(j, "vram");
    o.gpu = text(j, "gpu", kWhere);
    if (const std::string attention = text(j, "attention", kWhere); !attention.empty())
      o.attention = parse_name(kAttentionNames, attention, "attention");
    if (auto e = integer(j, "encoder_length", kWhere)) o.encoder_length = *e;
    if (const Json* t = field(j, "train")) {
      o.train = train_options(*t);
      if (auto g = integer(j, "gpus", kWhere)) o.train->gpus = *g;
    }
    const Result<RunReport> r = will_it_run(model, o);
    if (!r) throw r.error();
    return run_report_to_json(*r);
  });
}

}  // namespace memfit::api
