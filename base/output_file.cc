#include "base/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/utf8.h"

namespace reshard {
namespace {

namespace fs = std::filesystem;

// As the kernel's own limit on nested links (ELOOP).
constexpr int kMaxLinks = 40;

absl::Status Refused(absl::string_view what, const std::string& path, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(what, ": ", Utf8Valid(path), " ", why));
}

// A new empty file beside `target` (its descriptor and name), mode 0600.
absl::Status CreateTemporary(const std::string& target, absl::string_view what, int* fd,
                             std::string* name) {
  std::string pattern = absl::StrCat(target, ".tmp.XXXXXX");
  *fd = mkstemp(pattern.data());
  if (*fd < 0) {
    return Refused(what, target,
                   absl::StrCat("cannot be written: no file can be created beside it (",
                                std::strerror(errno), ")"));
  }
  *name = pattern;
  return absl::OkStatus();
}

absl::Status WriteAll(int fd, absl::string_view contents) {
  while (!contents.empty()) {
    const ssize_t n = write(fd, contents.data(), contents.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::InternalError(std::strerror(n < 0 ? errno : ENOSPC));
    contents.remove_prefix(static_cast<size_t>(n));
  }
  return fsync(fd) == 0 ? absl::OkStatus() : absl::InternalError(std::strerror(errno));
}

}  // namespace

absl::StatusOr<std::string> CheckOutputPath(const std::string& path, absl::string_view what) {
  if (path.empty()) return absl::InvalidArgumentError(absl::StrCat(what, ": an empty path"));
  fs::path target = path;
  std::error_code error;
  for (int links = 0; fs::is_symlink(fs::symlink_status(target, error)); ++links) {
    if (links == kMaxLinks) return Refused(what, path, "is a loop of symbolic links");
    const fs::path next = fs::read_symlink(target, error);
    if (error) return Refused(what, path, absl::StrCat("cannot be read: ", error.message()));
    target = next.is_absolute() ? next : target.parent_path() / next;
  }
  const fs::file_status status = fs::symlink_status(target, error);
  if (status.type() == fs::file_type::directory) {
    return Refused(what, path, "is a directory; name a file in it");
  }
  if (status.type() != fs::file_type::not_found && status.type() != fs::file_type::regular) {
    return Refused(what, path,
                   "is not a regular file (a device, FIFO or socket); it is left alone: name a "
                   "regular file or a new path");
  }
  const std::string resolved = target.string();
  int fd = -1;
  std::string temporary;
  if (absl::Status s = CreateTemporary(resolved, what, &fd, &temporary); !s.ok()) return s;
  close(fd);
  unlink(temporary.c_str());
  return resolved;
}

absl::Status WriteOutputFile(const std::string& path, absl::string_view contents,
                             absl::string_view what) {
  absl::StatusOr<std::string> target = CheckOutputPath(path, what);
  if (!target.ok()) return target.status();
  int fd = -1;
  std::string temporary;
  if (absl::Status s = CreateTemporary(*target, what, &fd, &temporary); !s.ok()) return s;
  struct stat existing;
  if (stat(target->c_str(), &existing) == 0) fchmod(fd, existing.st_mode & 07777);
  absl::Status written = WriteAll(fd, contents);
  if (close(fd) != 0 && written.ok()) written = absl::InternalError(std::strerror(errno));
  if (written.ok() && rename(temporary.c_str(), target->c_str()) != 0) {
    written = absl::InternalError(std::strerror(errno));
  }
  if (!written.ok()) {
    unlink(temporary.c_str());
    return Refused(
        what, path,
        absl::StrCat("cannot be written: ", written.message(), "; it is left as it was"));
  }
  return absl::OkStatus();
}

}  // namespace reshard
