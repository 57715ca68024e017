// Python's round(x, 2) and repr, as accelerate's convert_bytes prints them.
#include <doctest/doctest.h>

#include "memfit/report/convert_bytes.h"

using memfit::convert_bytes;
using memfit::python_round2_repr;

TEST_CASE("python_round2_repr matches CPython") {
  CHECK(python_round2_repr(9.0) == "9.0");
  CHECK(python_round2_repr(97.66) == "97.66");
  CHECK(python_round2_repr(1.125) == "1.12");   // exact tie: half to even
  CHECK(python_round2_repr(1.375) == "1.38");   // exact tie: half to even (up)
  CHECK(python_round2_repr(2.675) == "2.67");   // 2.675 is 2.67499999… in binary
  CHECK(python_round2_repr(0.0) == "0.0");
  CHECK(python_round2_repr(1023.999) == "1024.0");
  CHECK(python_round2_repr(0.5) == "0.5");
  CHECK(python_round2_repr(100.1) == "100.1");
}

TEST_CASE("convert_bytes picks the unit like accelerate") {
  // Python ints stay ints below 1 KB (round(512, 2) is 512); floats show ".0".
  CHECK(convert_bytes(0, true) == "0 bytes");
  CHECK(convert_bytes(512, true) == "512 bytes");
  CHECK(convert_bytes(512) == "512.0 bytes");
  CHECK(convert_bytes(1024, true) == "1.0 KB");
  CHECK(convert_bytes(1023.999) == "1024.0 bytes");
  CHECK(convert_bytes(1024) == "1.0 KB");
  CHECK(convert_bytes(433249280) == "413.18 MB");          // bert-base-cased, float32
  CHECK(convert_bytes(433249280.0 * 4) == "1.61 GB");
  CHECK(convert_bytes(89075712) == "84.95 MB");            // its word embeddings
  CHECK(convert_bytes(1024.0 * 1024 * 1024 * 1024 * 1024 * 3) == "3.0 PB");
}
