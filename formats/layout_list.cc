#include "formats/layout_list.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/bounded_input.h"
#include "base/utf8.h"
#include "planner/layout/dist_spec.h"

namespace reshard {

absl::StatusOr<std::vector<DistState>> ParseLayoutList(absl::string_view text,
                                                       absl::string_view source,
                                                       const DeviceMesh& mesh,
                                                       const std::vector<int64_t>& shape,
                                                       DType dtype, int64_t max_layouts) {
  std::vector<DistState> layouts;
  int64_t number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    const absl::string_view layout = absl::StripAsciiWhitespace(line);
    if (layout.empty()) continue;
    if (static_cast<int64_t>(layouts.size()) == max_layouts) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ": more than ", max_layouts, " layouts, so more than ",
                       max_layouts * max_layouts, " pairs, the limit"));
    }
    absl::StatusOr<DistSpec> spec = DistSpec::Parse(mesh, layout, shape, dtype);
    if (!spec.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, " line ", number, ": ", spec.status().message()));
    }
    layouts.push_back(spec->state());
  }
  if (layouts.empty()) return absl::InvalidArgumentError(absl::StrCat(source, ": no layout"));
  return layouts;
}

absl::StatusOr<std::vector<DistState>> ReadLayoutList(const std::string& path,
                                                      const DeviceMesh& mesh,
                                                      const std::vector<int64_t>& shape,
                                                      DType dtype, int64_t max_layouts) {
  absl::StatusOr<std::string> text = ReadBoundedFile(path, (max_layouts + 1) * kMaxLayoutLineBytes);
  if (!text.ok()) return text.status();
  return ParseLayoutList(*text, Abbreviate(path, 200), mesh, shape, dtype, max_layouts);
}

}  // namespace reshard
