// A limit a request hit, carried in the status as a typed payload, so that
// callers (the CLI's exit codes and JSON, a solver deciding to retry with a
// larger budget) never search message text for it (issues 14, 19).
//
//   return LimitExceededError("max_search_edges", "the graph search generated ...");
//   ...
//   if (std::optional<std::string> limit = ExceededLimit(status)) ...  // "max_search_edges"
#ifndef RESHARD_BASE_LIMIT_STATUS_H_
#define RESHARD_BASE_LIMIT_STATUS_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "absl/strings/string_view.h"

namespace reshard {

// The payload's type URL; its value is the limit's field name.
inline constexpr absl::string_view kLimitPayloadUrl = "type.reshard/limit";

// ResourceExhausted with `message`, tagged with the field name of the limit
// (e.g. "max_expanded_states", "max_search_edges", "max_memory").
inline absl::Status LimitExceededError(absl::string_view field, absl::string_view message) {
  absl::Status status = absl::ResourceExhaustedError(message);
  status.SetPayload(kLimitPayloadUrl, absl::Cord(field));
  return status;
}

// The field name of the limit `status` reports, if it reports one.
inline std::optional<std::string> ExceededLimit(const absl::Status& status) {
  auto field = status.GetPayload(kLimitPayloadUrl);  // absl::optional<absl::Cord>
  if (!field.has_value()) return std::nullopt;
  return std::string(*field);
}

}  // namespace reshard

#endif  // RESHARD_BASE_LIMIT_STATUS_H_
