// Python keyword arguments as the JSON object of a `reshard batch` line, so
// that `reshard.plan(**request)` reads its keys with the batch reader
// (formats/request_json.h, RequestFromJson) and its answers and errors are the
// batch command's.
#ifndef RESHARD_PYTHON_PY_JSON_H_
#define RESHARD_PYTHON_PY_JSON_H_

#include <pybind11/pybind11.h>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace reshard {

// None -> null, bool -> true/false, int and anything with __index__ (numpy
// integers) -> an integer, float -> a number, str -> a string, list and tuple
// (torch.Size) -> an array, dict with str keys -> an object. A bool stays a
// bool, so `shape=[True]` is refused as the batch line `"shape":[true]` is.
// InvalidArgument naming `field` for any other type, an int beyond 64 bits,
// or nesting deeper than a batch line may have. Needs the GIL.
absl::StatusOr<nlohmann::json> JsonFromPython(pybind11::handle value, const std::string& field);

}  // namespace reshard

#endif  // RESHARD_PYTHON_PY_JSON_H_
