#include "formats/batch_line.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "base/utf8.h"
#include "formats/cross_mesh_json.h"
#include "formats/request_json.h"
#include "formats/result_json.h"

namespace reshard {
namespace {

using json = nlohmann::json;

// Deeper JSON than this is not a case; refusing it early keeps a hostile line
// from exhausting the stack in the recursive parts of the JSON library.
constexpr int kMaxJsonDepth = 16;

// Deepest nesting of [ and { outside strings; stops counting past the limit.
int JsonDepth(absl::string_view text) {
  int depth = 0, max_depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth && (max_depth = depth) > kMaxJsonDepth) break;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return max_depth;
}

// The JSON parser keeps integers beyond 64 bits only as doubles; echoing such
// an id would print other digits than the request's.
absl::Status CheckId(const json& id) {
  if (!id.is_number_float()) return absl::OkStatus();
  const double v = id.get<double>();
  if (std::abs(v) < 0x1p63 || v != std::floor(v)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("id: ", Abbreviate(id.dump(), 40),
                   " cannot be echoed exactly: a numeric id must be an integer of at most 64 bits "
                   "or a number below 2^63 in magnitude; give other ids as strings"));
}

}  // namespace

void AppendCaseResult(const json& object, int64_t max_states, std::string* out,
                      ProfileCache* profiles, int64_t max_edges) {
  json id = object.is_object() && object.contains("id") ? object["id"] : json();
  if (absl::Status s = CheckId(id); !s.ok()) return AppendResultJson(json(), s, out);
  RequestFields request;
  request.max_states = max_states;
  request.max_edges = max_edges;
  if (absl::Status s = RequestFromJson(object, &request); !s.ok()) {
    return AppendResultJson(id, s, out);
  }
  if (IsCrossMesh(request)) {
    return AppendCrossMeshResultJson(
        id, CrossMeshPlanFromFields(request, FieldStyle::kJsonKey, profiles), out);
  }
  AppendResultJson(id, PlanFromFields(request, FieldStyle::kJsonKey, profiles), out);
}

void AppendCaseResult(absl::string_view line, int64_t max_states, std::string* out,
                      ProfileCache* profiles, int64_t max_edges) {
  // The JSON parser stops at a NUL byte as at the end of the text: what
  // follows one would be ignored silently.
  if (size_t nul = line.find('\0'); nul != absl::string_view::npos) {
    return AppendResultJson(
        json(),
        absl::InvalidArgumentError(absl::StrCat("malformed JSON: a NUL byte at column ", nul + 1)),
        out);
  }
  if (JsonDepth(line) > kMaxJsonDepth) {
    return AppendResultJson(json(),
                            absl::InvalidArgumentError(
                                absl::StrCat("malformed JSON: nested deeper than ", kMaxJsonDepth)),
                            out);
  }
  json object;
  try {
    object = json::parse(line.begin(), line.end());
  } catch (const json::exception& e) {
    // The library's message says where and what ("parse error at line 1, column 5: ...",
    // "number overflow parsing '1e400'").
    return AppendResultJson(json(),
                            absl::InvalidArgumentError(absl::StrCat(
                                "malformed JSON: ", Abbreviate(e.what(), kMaxJsonErrorBytes))),
                            out);
  }
  AppendCaseResult(object, max_states, out, profiles, max_edges);
}

}  // namespace reshard
