#include "base/byte_size.h"

#include <cmath>

#include "absl/strings/str_format.h"

namespace reshard {

std::string ShownBytes(double bytes) {
  if (!std::isfinite(bytes)) return absl::StrFormat("%g bytes", bytes);
  if (std::abs(bytes) < 1024) {
    const double whole = std::round(bytes);
    return absl::StrFormat("%.0f %s", whole, whole == 1 ? "byte" : "bytes");
  }
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int unit = 0;
  double scaled = bytes / 1024;
  // Past 999.5 the three digits would round to "1e+03": the next unit reads better.
  while (std::abs(scaled) >= 999.5 && unit + 1 < 6) {
    scaled /= 1024;
    ++unit;
  }
  return absl::StrFormat("%.3g %s", scaled, kUnits[unit]);
}

}  // namespace reshard
