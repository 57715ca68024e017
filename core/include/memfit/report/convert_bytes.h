// memfit/report/convert_bytes.h — accelerate's convert_bytes(), as Python prints it.
#pragma once

#include <string>

namespace memfit {

// Python's repr(round(x, 2)): correctly rounded (half to even on the exact binary value), then
// the shortest string that round-trips, always with a decimal point ("9.0", "1.12").
std::string python_round2_repr(double x);

// "413.18 MB": divide by 1024 while ≥ 1024, units bytes KB MB GB TB, then PB.
// `python_int`: the value is a Python int in accelerate (no bool tensor contributed, no
// division): below 1 KB it then prints without ".0" ("512 bytes"), as round(int, 2) does.
std::string convert_bytes(double bytes, bool python_int = false);

}  // namespace memfit
