// Writing a file the user named (`--out`), without changing anything else
// (issue 44): the write lands on what the path names, atomically, or not at
// all.
//   * A symlink is followed to its final target, which is replaced there (a
//     temporary file beside the target, then a rename): the link stays a link.
//   * The target must be a regular file or missing: a directory, FIFO, device
//     or socket is refused, never replaced by a file.
//   * Checkable up front (CheckOutputPath), before minutes of work.
//
//   RESHARD_RETURN_IF_ERROR(CheckOutputPath(out, "--out"));   // before timing
//   ...
//   RESHARD_RETURN_IF_ERROR(WriteOutputFile(out, text, "--out"));
#ifndef RESHARD_BASE_OUTPUT_FILE_H_
#define RESHARD_BASE_OUTPUT_FILE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace reshard {

// The file a write to `path` replaces: `path`, or the final target of its
// symlinks. InvalidArgument, its message starting with `what` and naming the
// path, when that target is neither a regular file nor missing, the links
// loop, or no file can be created beside it (checked by creating and removing
// one: nothing is left behind).
absl::StatusOr<std::string> CheckOutputPath(const std::string& path, absl::string_view what);

// Writes `contents` to CheckOutputPath(path)'s target atomically: a new
// temporary file beside it (a name no file has), then a rename over it,
// keeping an existing target's permissions. A failure leaves the target as it
// was. Errors as CheckOutputPath's, or InvalidArgument when writing fails.
absl::Status WriteOutputFile(const std::string& path, absl::string_view contents,
                             absl::string_view what);

}  // namespace reshard

#endif  // RESHARD_BASE_OUTPUT_FILE_H_
