#include "collectives/stores/file_store.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"

namespace reshard {

namespace {

// Keys may hold any byte ('/' above all); file names may not. Plain
// characters stay readable, the rest become %XX; a key too long for a file
// name becomes its hash plus a readable head.
std::string FileNameOf(absl::string_view key) {
  std::string name = "k_";
  for (unsigned char c : key) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '.' || c == '_' || c == '-';
    if (plain) {
      name += static_cast<char>(c);
    } else {
      absl::StrAppendFormat(&name, "%%%02X", c);
    }
  }
  constexpr size_t kMaxName = 200;  // below NAME_MAX (255) with room for the temporary suffix
  if (name.size() <= kMaxName) return name;
  uint64_t hash = 14695981039346656037ull;  // FNV-1a: stable across processes and hosts
  for (unsigned char c : key) hash = (hash ^ c) * 1099511628211ull;
  return absl::StrFormat("h_%016x_%s", hash, name.substr(2, 100));
}

class FileStore final : public Store {
 public:
  explicit FileStore(std::string dir) : dir_(std::move(dir)) {}

  absl::Status Set(absl::string_view key, const std::vector<char>& value) override {
    const std::string path = absl::StrCat(dir_, "/", FileNameOf(key));
    absl::StatusOr<std::string> tmp = WriteTemporary(key, value);
    if (!tmp.ok()) return tmp.status();
    if (std::rename(tmp->c_str(), path.c_str()) != 0) {
      const absl::Status s = Unavailable("renaming into place", key, path);
      std::remove(tmp->c_str());
      return s;
    }
    return absl::OkStatus();
  }

  // Written to a temporary file, then hard-linked into place: link() fails
  // with EEXIST when the key exists, atomically, even on NFS.
  absl::StatusOr<std::vector<char>> SetIfAbsent(absl::string_view key,
                                                const std::vector<char>& value) override {
    const std::string path = absl::StrCat(dir_, "/", FileNameOf(key));
    absl::StatusOr<std::string> tmp = WriteTemporary(key, value);
    if (!tmp.ok()) return tmp.status();
    const bool linked = link(tmp->c_str(), path.c_str()) == 0;
    const int link_errno = errno;
    std::remove(tmp->c_str());
    if (linked) return value;
    if (link_errno != EEXIST) {
      errno = link_errno;
      return Unavailable("linking into place", key, path);
    }
    return Get(key, absl::ZeroDuration());
  }

  absl::StatusOr<std::vector<char>> Get(absl::string_view key, absl::Duration timeout) override {
    const std::string path = absl::StrCat(dir_, "/", FileNameOf(key));
    const absl::Time deadline = absl::Now() + timeout;
    absl::Duration pause = absl::Milliseconds(1);
    while (true) {
      std::ifstream in(path, std::ios::binary);
      if (in) return std::vector<char>(std::istreambuf_iterator<char>(in), {});
      if (errno != ENOENT) return Unavailable("reading", key, path);
      if (absl::Now() >= deadline) {
        return absl::DeadlineExceededError(absl::StrFormat(
            "file store %s: key \"%s\" was not set within %s (did every rank start, on the "
            "same directory?)",
            dir_, key, ShownTimeout(timeout)));
      }
      absl::SleepFor(std::min(pause, deadline - absl::Now()));
      pause = std::min(pause * 2, absl::Milliseconds(10));
    }
  }

 private:
  // `value` in a file of its own, named uniquely per process and call so that
  // concurrent writers never share one.
  absl::StatusOr<std::string> WriteTemporary(absl::string_view key,
                                             const std::vector<char>& value) const {
    static std::atomic<uint64_t> counter{0};
    const std::string tmp = absl::StrCat(dir_, "/.tmp.", getpid(), ".", counter++);
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(value.data(), static_cast<std::streamsize>(value.size()));
    out.close();
    if (!out) return Unavailable("writing", key, tmp);
    return tmp;
  }

  absl::Status Unavailable(absl::string_view doing, absl::string_view key,
                           const std::string& path) const {
    return absl::UnavailableError(absl::StrFormat("file store %s: %s key \"%s\" (%s): %s", dir_,
                                                  doing, key, path, std::strerror(errno)));
  }

  std::string dir_;
};

}  // namespace

std::shared_ptr<Store> NewFileStore(const std::string& dir) {
  return std::make_shared<FileStore>(dir);
}

}  // namespace reshard
