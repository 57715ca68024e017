// plan(request) with `nodes`: several hosts, one pipeline stage each (docs/pipeline.md). Its own
// file so that the page's first WebAssembly module can leave it out (wasm/first_chunk.cpp).
#include "api_plan_request.h"
#include "memfit/plan/pipeline.h"

namespace memfit::api {

// `nodes` (the CLI's --nodes text), `link`, `balance`: several hosts, one pipeline stage each.
Json pipeline_plan(const Json& j) {
  if (j.contains("max_memory"))
    throw Error(ErrorCode::kInvalidArgument, "request: 'max_memory' and 'nodes' exclude each other");
  plan::PipelineRequest req;
  req.plan = plan_request(j);
  auto nodes = plan::parse_nodes(string_field(j, "nodes"));
  if (!nodes) throw nodes.error();
  req.nodes = std::move(nodes).value();
  if (const std::string link = string_field(j, "link"); !link.empty()) {
    auto l = plan::parse_link(link);
    if (!l) throw l.error();
    req.link = *l;
  }
  const std::string balance = string_field(j, "balance");
  if (!balance.empty() && balance != "memory" && balance != "compute")
    throw Error(ErrorCode::kInvalidArgument, "request: 'balance' is 'memory' or 'compute', not '" + balance + "'");
  req.balance = balance == "compute" ? plan::Balance::kCompute : plan::Balance::kMemory;
  auto model = build_model(req.plan.model);
  if (!model) throw model.error();
  auto p = plan::plan_pipeline(*model, req);
  if (!p) throw p.error();
  return plan::pipeline_to_json(*p);
}

}  // namespace memfit::api
