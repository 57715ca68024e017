// memfit::dump_json writes the very bytes of nlohmann's dump().
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>

#include "memfit/format/json_dump.h"

namespace {

using memfit::Json;

Json random_value(std::mt19937_64& rng, int depth) {
  static const std::string pieces[] = {"model", ".layers.", "0", "q_proj", "\"", "\\", "\n", "\t", "\x01", "\x7f",
                                       "é", "日本", "😀", " ", "/", "", "weight"};
  switch (depth > 3 ? rng() % 6 : rng() % 8) {
    case 0: return nullptr;
    case 1: return rng() % 2 == 0;
    case 2: return static_cast<std::int64_t>(rng()) >> (rng() % 64);
    case 3: return static_cast<std::uint64_t>(rng());
    case 4: {
      const double specials[] = {0.0, -0.0, 1.0, 0.1, 1e-5, 1e21, 1e300, 5e-324, 123456789.125,
                                 std::numeric_limits<double>::quiet_NaN(), HUGE_VAL};
      return rng() % 2 ? specials[rng() % 11] : std::ldexp(static_cast<double>(rng() >> 11), static_cast<int>(rng() % 200) - 100);
    }
    case 5: {
      std::string s;
      for (int i = 0, n = static_cast<int>(rng() % 6); i < n; ++i) s += pieces[rng() % 17];
      return s;
    }
    case 6: {
      Json a = Json::array();
      for (int i = 0, n = static_cast<int>(rng() % 5); i < n; ++i) a.push_back(random_value(rng, depth + 1));
      return a;
    }
    default: {
      Json o = Json::object();
      for (int i = 0, n = static_cast<int>(rng() % 5); i < n; ++i)
        o[random_value(rng, 9).dump()] = random_value(rng, depth + 1);  // keys with quotes and escapes too
      return o;
    }
  }
}

}  // namespace

TEST_CASE("dump_json: the same bytes as nlohmann's dump() for any value") {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 3000; ++i) {
    const Json j = random_value(rng, 0);
    CAPTURE(j.dump());
    CHECK(memfit::dump_json(j) == j.dump());
  }
  CHECK(memfit::dump_json(Json::object()) == "{}");
  CHECK(memfit::dump_json(Json::array()) == "[]");
  CHECK(memfit::dump_json(Json(std::numeric_limits<std::int64_t>::min())) == "-9223372036854775808");
}

TEST_CASE("dump_json: invalid UTF-8 is refused as dump() refuses it") {
  const Json bad = Json{{"name", std::string("a\xff")}};
  CHECK_THROWS_AS(memfit::dump_json(bad), nlohmann::json::type_error);
  CHECK_THROWS_AS(bad.dump(), nlohmann::json::type_error);
}
