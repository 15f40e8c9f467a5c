// What every fuzz target asserts about text reshard prints: one line of
// valid UTF-8 that parses as a JSON result object ({"id", "ok", ...}).
// A violation aborts, which libFuzzer reports as a crash with its input.
#ifndef RESHARD_FUZZ_FUZZ_CHECKS_H_
#define RESHARD_FUZZ_FUZZ_CHECKS_H_

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/string_view.h"
#include "base/utf8.h"
#include "nlohmann/json.hpp"

namespace reshard::fuzz {

[[noreturn]] inline void Fail(const char* what, absl::string_view text) {
  std::fprintf(stderr, "fuzz check failed: %s\n  text: %.*s\n", what,
               static_cast<int>(std::min<size_t>(text.size(), 400)), text.data());
  std::abort();
}

inline void CheckText(absl::string_view text, size_t max_bytes) {
  if (!IsValidUtf8(text)) Fail("output is not valid UTF-8", text);
  if (text.size() > max_bytes) Fail("output is longer than its bound", text);
}

// A result line as `reshard batch` writes it.
inline void CheckResultLine(const std::string& line) {
  if (line.find('\n') != std::string::npos) Fail("a result spans several lines", line);
  CheckText(line, 1 << 20);
  nlohmann::json result = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (result.is_discarded() || !result.is_object()) Fail("a result is not a JSON object", line);
  if (!result.contains("id") || !result.contains("ok") || !result["ok"].is_boolean()) {
    Fail("a result lacks id or ok", line);
  }
  if (!result["ok"].get<bool>() && !result["error"].is_string()) Fail("no error message", line);
}

}  // namespace reshard::fuzz

#endif  // RESHARD_FUZZ_FUZZ_CHECKS_H_
