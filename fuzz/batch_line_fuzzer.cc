// Fuzzes `reshard batch` on one input line, end to end through the code that
// prints its result (formats/batch_line.h, AppendCaseResult): any bytes must give
// exactly one result line of valid UTF-8 JSON, never a crash or exception.
#include <cstddef>
#include <cstdint>
#include <string>

#include "formats/batch_line.h"
#include "fuzz/fuzz_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view line(reinterpret_cast<const char*>(data), size);
  std::string out;
  // A small search bound keeps each input fast; the bound's own error path
  // is then exercised too.
  reshard::AppendCaseResult(line, /*max_states=*/2000, &out);
  reshard::fuzz::CheckResultLine(out);
  return 0;
}
