// libFuzzer target: config.json → tensor tree → report, in both modes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "memfit/memory/estimate.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 64 * 1024) return 0;  // configs are small; larger inputs only slow the fuzzer
  memfit::EstimateRequest req;
  req.config_text.assign(reinterpret_cast<const char*>(data), size);
  req.name = "fuzz";
  (void)memfit::estimate(req);
  req.mode = memfit::Mode::kAccelerate;
  auto r = memfit::estimate(req);
  if (r.ok()) (void)memfit::render_table(*r);
  return 0;
}
