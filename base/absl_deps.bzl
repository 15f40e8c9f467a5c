"""The Abseil targets almost every reshard library needs: Status, StatusOr,
strings (with str_format) and Span. One list, loaded by each package."""

ABSL_BASE = [
    "@com_google_absl//absl/status",
    "@com_google_absl//absl/status:statusor",
    "@com_google_absl//absl/strings",
    "@com_google_absl//absl/strings:str_format",
    "@com_google_absl//absl/types:span",
]
