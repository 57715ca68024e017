#include <fmt/format.h>

#include "api_common.h"
#include "memfit/api/api.h"
#include "memfit/format/safetensors.h"
#include "memfit/format/strict_json.h"
#include "memfit/report/report_json.h"

namespace memfit::api {
namespace {

std::string string_field(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return {};
  if (!it->is_string())
    throw Error(ErrorCode::kInvalidArgument, fmt::format("request: '{}' must be a string", key));
  return it->get<std::string>();
}

std::vector<CheckpointTensor> checkpoint_field(const Json& j) {
  std::vector<CheckpointTensor> out;
  auto it = j.find("checkpoint");
  if (it == j.end() || it->is_null()) return out;
  if (!it->is_array()) throw Error(ErrorCode::kInvalidArgument, "request: 'checkpoint' must be a list");
  for (const auto& t : *it) {
    if (!t.is_object() || !t.contains("name") || !t.contains("dtype") || !t.contains("shape") ||
        !t["name"].is_string() || !t["dtype"].is_string() || !t["shape"].is_array())
      throw Error(ErrorCode::kInvalidArgument,
                  "request: each checkpoint tensor needs name, dtype and shape");
    CheckpointTensor c;
    c.name = t["name"].get<std::string>();
    auto dt = dtype_from_safetensors(t["dtype"].get<std::string>());
    if (!dt)
      throw Error(ErrorCode::kInvalidArgument,
                  fmt::format("request: tensor '{}': unknown dtype '{}'", c.name, t["dtype"].get<std::string>()));
    c.dtype = *dt;
    for (const auto& d : t["shape"]) {
      if (!d.is_number_integer() || d.get<std::int64_t>() < 0)
        throw Error(ErrorCode::kInvalidArgument,
                    fmt::format("request: tensor '{}': shape must hold non-negative integers", c.name));
      c.shape.push_back(d.get<std::int64_t>());
    }
    c.file = t.value("file", std::string("model.safetensors"));
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

Json parse_request(const std::string& request_json) {
  Json j;
  if (auto err = parse_strict_json(request_json, 64, &j))
    throw Error(ErrorCode::kInvalidArgument, "request: not valid JSON: " + err->detail);
  if (!j.is_object()) throw Error(ErrorCode::kInvalidArgument, "request: expected a JSON object");
  return j;
}

EstimateRequest model_request(const Json& j) {
  EstimateRequest req;
  if (auto it = j.find("config"); it != j.end() && !it->is_null())
    req.config_text = it->is_string() ? it->get<std::string>() : it->dump();
  req.name = string_field(j, "name");
  req.library = string_field(j, "library");
  const std::string mode = string_field(j, "mode");
  if (mode == "accelerate") req.mode = Mode::kAccelerate;
  else if (mode.empty() || mode == "memfit") req.mode = Mode::kMemfit;
  else throw Error(ErrorCode::kInvalidArgument, fmt::format("request: unknown mode '{}'", mode));
  req.class_override = string_field(j, "class");
  req.checkpoint = checkpoint_field(j);
  const std::string source = string_field(j, "source");
  if (source == "config") req.source = EstimateRequest::Source::kConfig;
  else if (source == "checkpoint") req.source = EstimateRequest::Source::kCheckpoint;
  else if (!source.empty() && source != "auto")
    throw Error(ErrorCode::kInvalidArgument, fmt::format("request: unknown source '{}'", source));
  if (!req.checkpoint.empty() && req.source == EstimateRequest::Source::kAuto)
    req.source = EstimateRequest::Source::kCheckpoint;
  if (auto it = j.find("dtypes"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) throw Error(ErrorCode::kInvalidArgument, "request: 'dtypes' must be a list");
    for (const auto& d : *it) {
      if (!d.is_string()) throw Error(ErrorCode::kInvalidArgument, "request: 'dtypes' must hold strings");
      req.dtypes.push_back(d.get<std::string>());
    }
  }
  return req;
}

std::string respond(const std::string& request_json, Json (*fn)(const Json& request)) {
  Result<std::string> r = capture([&]() -> std::string { return dump_json(fn(parse_request(request_json))); });
  return r.ok() ? r.value() : error_reply(r.error());
}

std::string estimate(const std::string& request_json) {
  return respond(request_json, [](const Json& j) {
    const Result<Report> r = memfit::estimate(model_request(j));
    if (!r) throw r.error();
    Json out = report_to_json(*r);
    out["table"] = render_table(*r);
    return out;
  });
}

std::string parse_safetensors_header(const std::string& bytes, double file_size) {
  auto h = safetensors::parse(bytes,
                              file_size >= 0 ? std::optional<std::uint64_t>(static_cast<std::uint64_t>(file_size))
                                             : std::nullopt,
                              "model.safetensors");
  if (!h) return error_reply(h.error());
  Json out;
  Json& tensors = out["tensors"] = Json::array();
  for (const auto& t : h->tensors) {
    Json tensor;
    tensor["name"] = t.name;
    tensor["dtype"] = std::string(safetensors_name(t.dtype));
    tensor["shape"] = t.shape;
    Json& offsets = tensor["data_offsets"];
    offsets.push_back(t.begin);
    offsets.push_back(t.end);
    tensors.push_back(std::move(tensor));
  }
  Json md = Json::object();
  for (const auto& [k, v] : h->metadata) md[k] = v;
  out["metadata"] = md;
  out["header_size"] = h->header_size;
  out["data_size"] = h->data_size;
  return out.dump();
}

}  // namespace memfit::api
