// tests/support/model_of.h — build_model() on a config's text, as a test needs it: the Model, or
// a failed REQUIRE naming the error (and the other way round: the error a bad config gives).
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

// The message of build_model()'s error on a config's text, or a failed REQUIRE when it builds.
inline std::string build_error(const std::string& config_text) {
  EstimateRequest req;
  req.config_text = config_text;
  const Result<Model> r = build_model(req);
  REQUIRE_FALSE(r.ok());
  return r.error().message();
}

}  // namespace memfit::test
