// A request's fields as the user typed them: the library names a field as
// PlanOptions spells it ("max_memory: must be ...", `cost_model` inside a
// message, plan_request.h); the CLI prints the flag (`reshard plan`:
// --max-memory) or the JSON key (`reshard batch`: max_memory).
#ifndef RESHARD_FORMATS_REQUEST_FIELDS_H_
#define RESHARD_FORMATS_REQUEST_FIELDS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace reshard {

// How error messages name a field: as a JSON key ("cost_model") or as a flag ("--cost-model").
enum class FieldStyle { kJsonKey, kFlag };

// A library or batch-key field name in `style`: "max_expanded_states" is
// max_states / --max-states, "max_search_edges" max_edges / --max-edges; any other field keeps its
// name as a key and becomes --name-with-dashes as a flag.
std::string FieldName(absl::string_view field, FieldStyle style);

// InvalidArgument "<field in style>: <message>"; a message that already starts
// with "<field>: " is not prefixed twice.
absl::Status FieldError(absl::string_view field, FieldStyle style, absl::string_view message);

// `status` with its field names in `style`: a leading "field: " and every
// `field` in backquotes; code and payloads kept (PlanLimitOf still works).
absl::Status InFrontEndTerms(const absl::Status& status, FieldStyle style);

}  // namespace reshard

#endif  // RESHARD_FORMATS_REQUEST_FIELDS_H_
