// Reading input a user hands the tool (profile files, layout lists, batch
// lines) with bounds checked while reading, so that no input can make the
// tool hang, grow without limit or overflow its stack (issue 19):
//   * only regular files and pipes are read (a device such as /dev/zero is
//     refused before the first byte);
//   * a file or a line stops being read as soon as it passes its byte limit;
//   * JSON nesting is measured on the raw text before any parser sees it.
//
//   absl::StatusOr<std::string> text = ReadBoundedFile(path, kMaxProfileBytes);
//   LineReader lines(std::cin, kMaxBatchLineBytes);
//   while (lines.Next(&line) != LineReader::kEnd) ...
#ifndef RESHARD_BASE_BOUNDED_INPUT_H_
#define RESHARD_BASE_BOUNDED_INPUT_H_

#include <cstdint>
#include <istream>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace reshard {

// The whole of `path` ("-" is stdin) if it is a regular file or a pipe of at
// most `max_bytes` bytes. InvalidArgument naming the path otherwise: missing
// or unreadable, another kind of file, or longer than the limit (checked
// while reading: a growing file or an endless pipe stops at the limit).
// A named pipe is waited for as `cat` would; when nothing has been written to
// it within a second, a line on stderr says the tool is waiting for its writer.
absl::StatusOr<std::string> ReadBoundedFile(const std::string& path, int64_t max_bytes);

// Lines of a stream, each at most `max_bytes` bytes (without its newline).
// A longer line is reported as kTooLong and skipped to its end without being
// kept, so memory stays bounded whatever the input.
class LineReader {
 public:
  enum Result { kLine, kTooLong, kEnd };
  LineReader(std::istream& in, size_t max_bytes) : in_(in), max_bytes_(max_bytes) {}
  // The next line into *line (cleared first; on kTooLong it holds the line's
  // first max_bytes bytes).
  Result Next(std::string* line);
  // 1-based number of the line Next returned last.
  int64_t number() const { return number_; }

 private:
  // The stream's next bytes into buffer_, waiting for no more than one read
  // (a caller streaming lines gets each answer before sending the next);
  // false at the end of the stream.
  bool Fill();

  std::istream& in_;
  size_t max_bytes_;
  int64_t number_ = 0;
  // Read but not yet returned: [begin_, end_). Lines are found with memchr,
  // not a byte at a time.
  char buffer_[1 << 14];
  size_t begin_ = 0;
  size_t end_ = 0;
};

// The deepest nesting of [ and { outside JSON strings, counted no further
// than `stop_after` + 1 (so a 100 MB "[[[[..." costs one pass and no memory).
int JsonNestingDepth(absl::string_view text, int stop_after);

// OK, or InvalidArgument "<source>: JSON nested deeper than <max_depth>
// levels" (a recursive parser or destructor would overflow the stack).
absl::Status CheckJsonNesting(absl::string_view text, absl::string_view source, int max_depth);

}  // namespace reshard

#endif  // RESHARD_BASE_BOUNDED_INPUT_H_
