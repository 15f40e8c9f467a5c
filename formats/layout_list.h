// Layout lists (`reshard costs --layouts FILE`): one layout per line in the
// notation, blank lines skipped. Read through base/bounded_input.h: only a
// regular file or a pipe, and no more bytes than `max_layouts` lines may
// take, so a huge or endless file is refused while it is read (issue 19).
#ifndef RESHARD_FORMATS_LAYOUT_LIST_H_
#define RESHARD_FORMATS_LAYOUT_LIST_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "mesh/device_mesh.h"
#include "planner/layout/dist_state.h"
#include "planner/layout/dtype.h"

namespace reshard {

// The longest layout line read (8 tokens need ~200 bytes).
inline constexpr int64_t kMaxLayoutLineBytes = 1024;

// The layouts of `text`, parsed for mesh/shape/dtype; InvalidArgument
// "<source> line N: ..." for a bad one, or when there are more than
// `max_layouts` or none.
absl::StatusOr<std::vector<DistState>> ParseLayoutList(absl::string_view text,
                                                       absl::string_view source,
                                                       const DeviceMesh& mesh,
                                                       const std::vector<int64_t>& shape,
                                                       DType dtype, int64_t max_layouts);

// The same from `path` ("-": stdin), read to at most (max_layouts + 1) *
// kMaxLayoutLineBytes bytes.
absl::StatusOr<std::vector<DistState>> ReadLayoutList(const std::string& path,
                                                      const DeviceMesh& mesh,
                                                      const std::vector<int64_t>& shape,
                                                      DType dtype, int64_t max_layouts);

}  // namespace reshard

#endif  // RESHARD_FORMATS_LAYOUT_LIST_H_
