#include "base/bounded_input.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/utf8.h"

namespace reshard {
namespace {

constexpr int kFifoQuietMs = 1000;

absl::Status FileError(const std::string& path, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(Abbreviate(path, 200), ": ", why));
}

// Reads fd to its end or one byte past max_bytes, whichever comes first.
absl::StatusOr<std::string> ReadAtMost(int fd, const std::string& path, int64_t max_bytes) {
  std::string text;
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n == 0) return text;
    if (n < 0) {
      if (errno == EINTR) continue;
      return FileError(path, absl::StrCat("cannot read: ", std::strerror(errno)));
    }
    if (static_cast<int64_t>(text.size()) + n > max_bytes) {
      return FileError(path, absl::StrCat("longer than ", max_bytes, " bytes, the limit"));
    }
    text.append(buffer, static_cast<size_t>(n));
  }
}

}  // namespace

absl::StatusOr<std::string> ReadBoundedFile(const std::string& path, int64_t max_bytes) {
  const bool is_stdin = path == "-";
  // Opened non-blocking so that no device can block the open.
  int fd = is_stdin ? STDIN_FILENO : open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return FileError(path, absl::StrCat("cannot open: ", std::strerror(errno)));
  struct stat info;
  absl::StatusOr<std::string> text;
  if (fstat(fd, &info) != 0) {
    text = FileError(path, absl::StrCat("cannot stat: ", std::strerror(errno)));
  } else if (S_ISDIR(info.st_mode)) {
    text = FileError(path, "a directory, not a file");
  } else if (!S_ISREG(info.st_mode) && !S_ISFIFO(info.st_mode)) {
    text = FileError(path, "not a regular file or a pipe");
  } else if (S_ISREG(info.st_mode) && info.st_size > max_bytes) {
    text = FileError(path, absl::StrCat(info.st_size, " bytes, over the limit of ", max_bytes));
  } else {
    if (!is_stdin && S_ISFIFO(info.st_mode)) {
      // A named FIFO opened non-blocking reads as empty until its writer
      // comes; open it again, waiting for the writer as a user expects, and
      // say so when nothing arrives within a second (else a silent hang).
      pollfd ready = {fd, POLLIN, 0};
      if (poll(&ready, 1, kFifoQuietMs) == 0) {
        std::fprintf(stderr, "%s: a named pipe with nothing written yet; waiting for its writer\n",
                     Abbreviate(path, 200).c_str());
      }
      close(fd);
      fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) return FileError(path, absl::StrCat("cannot open: ", std::strerror(errno)));
    } else if (!is_stdin) {
      fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    }
    text = ReadAtMost(fd, path, max_bytes);
  }
  if (!is_stdin) close(fd);
  return text;
}

bool LineReader::Fill() {
  std::streambuf* buf = in_.rdbuf();
  std::streamsize available = buf->in_avail();
  if (available <= 0) {
    if (buf->sgetc() == std::char_traits<char>::eof()) return false;  // one read, as before
    available = std::max<std::streamsize>(buf->in_avail(), 1);
  }
  const std::streamsize n =
      buf->sgetn(buffer_, std::min<std::streamsize>(available, sizeof(buffer_)));
  begin_ = 0;
  end_ = static_cast<size_t>(std::max<std::streamsize>(n, 0));
  return end_ > 0;
}

LineReader::Result LineReader::Next(std::string* line) {
  line->clear();
  bool any = false, too_long = false;
  while (begin_ < end_ || Fill()) {
    any = true;
    const char* start = buffer_ + begin_;
    const char* newline = static_cast<const char*>(std::memchr(start, '\n', end_ - begin_));
    const size_t n = static_cast<size_t>((newline != nullptr ? newline : buffer_ + end_) - start);
    const size_t room = max_bytes_ - std::min(max_bytes_, line->size());
    line->append(start, std::min(n, room));  // past max_bytes: keep consuming, keep nothing
    too_long = too_long || n > room;
    begin_ += n;
    if (newline != nullptr) {
      ++begin_;
      break;
    }
  }
  if (!any) return kEnd;
  ++number_;
  return too_long ? kTooLong : kLine;
}

int JsonNestingDepth(absl::string_view text, int stop_after) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest && (deepest = depth) > stop_after) break;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

absl::Status CheckJsonNesting(absl::string_view text, absl::string_view source, int max_depth) {
  if (JsonNestingDepth(text, max_depth) <= max_depth) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(source, ": JSON nested deeper than ", max_depth, " levels, the limit"));
}

}  // namespace reshard
