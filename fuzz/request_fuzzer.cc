// Fuzzes the JSON request decoder (formats/request_json.h, RequestFromJson and
// PlanFromFields) on structured input: objects with the known keys (and
// some unknown ones) holding values of every JSON type, including integers
// at the edges of int64/uint64, huge doubles, long and non-ASCII strings.
// The result must be one valid UTF-8 JSON line.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "formats/batch_line.h"
#include "formats/request_json.h"
#include "fuzz/fuzz_checks.h"

namespace {

using json = nlohmann::json;

json Scalar(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange(0, 9)) {
    case 0:
      return nullptr;
    case 1:
      return in.ConsumeBool();
    case 2:
      return in.ConsumeIntegralInRange<int64_t>(-3, 9);
    case 3:
      return in.ConsumeIntegral<int64_t>();
    case 4:
      return in.ConsumeIntegral<uint64_t>();
    case 5:
      return in.ConsumeFloatingPoint<double>();
    case 6: {
      static const char* kTokens[] = {"S(0)",   "S(1)",         "R",       "P(sum)",   "P(avg)",
                                      "P(max)", "S(0)[1]",      "S(0)[0]", "_S(0, 2)", "P",
                                      "S(-1)",  "f32",          "bool",    "graph",    "greedy",
                                      "auto",   "pytorch-const"};
      std::string s;
      const int n = in.ConsumeIntegralInRange(0, 4);
      for (int i = 0; i < n; ++i) s += kTokens[in.ConsumeIntegralInRange<size_t>(0, 16)];
      return s;
    }
    default: {
      // Raw bytes, made valid UTF-8 as the JSON parser would insist.
      return reshard::Utf8Valid(in.ConsumeRandomLengthString(64));
    }
  }
}

json Value(FuzzedDataProvider& in) {
  if (in.ConsumeIntegralInRange(0, 3) != 0) return Scalar(in);
  json list = json::array();
  const int n = in.ConsumeIntegralInRange(0, 5);
  for (int i = 0; i < n; ++i) list.push_back(Scalar(in));
  return list;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  static const char* kKeys[] = {"id",         "mesh",       "shape",
                                "dtype",      "src",        "dst",
                                "algorithm",  "cost_model", "devices_per_host",
                                "coordinate", "expected",   "bogus"};
  json object = json::object();
  const int keys = in.ConsumeIntegralInRange(0, 12);
  for (int i = 0; i < keys; ++i) object[kKeys[in.ConsumeIntegralInRange(0, 11)]] = Value(in);
  const json request = in.ConsumeIntegralInRange(0, 15) == 0 ? Value(in) : object;
  std::string out;
  reshard::AppendCaseResult(request, /*max_states=*/2000, &out);
  reshard::fuzz::CheckResultLine(out);
  return 0;
}
