// One line of `reshard batch` end to end: a JSON request in, a JSON result
// out (request_json.h, result_json.h, cross_mesh_json.h). The parity tests
// use it too, so they check exactly what `batch` prints.
//
//   std::string result;
//   AppendCaseResult(line, /*max_states=*/1000000, &result);
//   // {"id":...,"ok":true,"algorithm":"graph","cost":14.4,"trace":"...","steps":[...]}
#ifndef RESHARD_FORMATS_BATCH_LINE_H_
#define RESHARD_FORMATS_BATCH_LINE_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "formats/profile_json.h"
#include "nlohmann/json.hpp"
#include "planner/planner.h"

namespace reshard {

// A batch line is at most this long (1 MiB: a case needs well under 1 KB);
// `reshard batch` answers a longer one with an error, reading no further
// into it than this.
inline constexpr size_t kMaxBatchLineBytes = 1 << 20;

// One case end to end, as `reshard batch` does for each line (a cross-mesh
// one as AppendCrossMeshResultJson writes it); never fails: problems become
// {"ok": false, "error": ...}. `max_states` and `max_edges`
// bound the graph search (a line's "max_edges" key overrides the latter).
void AppendCaseResult(const nlohmann::json& object, int64_t max_states, std::string* out,
                      ProfileCache* profiles = nullptr, int64_t max_edges = kDefaultMaxSearchEdges);
// The same from the line's text (malformed JSON is an error result with id null).
void AppendCaseResult(absl::string_view line, int64_t max_states, std::string* out,
                      ProfileCache* profiles = nullptr, int64_t max_edges = kDefaultMaxSearchEdges);

}  // namespace reshard

#endif  // RESHARD_FORMATS_BATCH_LINE_H_
