#include "formats/request_fields.h"

#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"

namespace reshard {
namespace {

// The request's fields (plan_request.h, RequestFields, CostMatrixOptions);
// other words before a colon ("no_path: ...") are not fields.
constexpr absl::string_view kFields[] = {"mesh",
                                         "shape",
                                         "dtype",
                                         "src",
                                         "dst",
                                         "dst_mesh",
                                         "src_ranks",
                                         "dst_ranks",
                                         "mode",
                                         "algorithm",
                                         "cost_model",
                                         "profile",
                                         "devices_per_host",
                                         "coordinate",
                                         "max_memory",
                                         "max_expanded_states",
                                         "max_states",
                                         "max_search_edges",
                                         "max_edges",
                                         "max_pairs",
                                         "threads"};

bool IsField(absl::string_view word) {
  for (absl::string_view f : kFields) {
    if (word == f) return true;
  }
  return false;
}

// The leading field name of "field: ...", or empty.
absl::string_view LeadingField(absl::string_view message) {
  const size_t colon = message.find(": ");
  if (colon == absl::string_view::npos || !IsField(message.substr(0, colon))) return {};
  return message.substr(0, colon);
}

}  // namespace

std::string FieldName(absl::string_view field, FieldStyle style) {
  if (field == "max_expanded_states") field = "max_states";
  if (field == "max_search_edges") field = "max_edges";
  if (style == FieldStyle::kJsonKey) return std::string(field);
  return absl::StrCat("--", absl::StrReplaceAll(field, {{"_", "-"}}));
}

absl::Status FieldError(absl::string_view field, FieldStyle style, absl::string_view message) {
  absl::ConsumePrefix(&message, absl::StrCat(field, ": "));
  return absl::InvalidArgumentError(absl::StrCat(FieldName(field, style), ": ", message));
}

absl::Status InFrontEndTerms(const absl::Status& status, FieldStyle style) {
  absl::string_view message = status.message();
  std::string out;
  if (absl::string_view field = LeadingField(message); !field.empty()) {
    absl::StrAppend(&out, FieldName(field, style), ": ");
    message.remove_prefix(field.size() + 2);
  }
  // `field` -> the field in `style`; other backquoted text is kept as it is.
  while (!message.empty()) {
    const size_t open = message.find('`');
    const size_t close = open == absl::string_view::npos ? open : message.find('`', open + 1);
    if (close == absl::string_view::npos) break;
    const absl::string_view inner = message.substr(open + 1, close - open - 1);
    absl::StrAppend(
        &out, message.substr(0, open),
        IsField(inner) ? FieldName(inner, style) : message.substr(open, close - open + 1));
    message.remove_prefix(close + 1);
  }
  absl::StrAppend(&out, message);
  absl::Status translated(status.code(), out);
  status.ForEachPayload([&](absl::string_view url, const absl::Cord& payload) {
    translated.SetPayload(url, payload);
  });
  return translated;
}

}  // namespace reshard
