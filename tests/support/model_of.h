// tests/support/model_of.h — build_model() on a config's text, as a test needs it: the Model, or
// a failed REQUIRE naming the error.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <utility>

#include "memfit/model/model.h"

namespace memfit::test {

inline Model model_of(const std::string& config_text, const std::string& name = "") {
  EstimateRequest req;
  req.config_text = config_text;
  req.name = name;
  Result<Model> m = build_model(req);
  REQUIRE_MESSAGE(m.ok(), m.error().message());
  return std::move(m).value();
}

}  // namespace memfit::test
