#include "collectives/nccl/nccl_bootstrap.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace reshard {

absl::StatusOr<std::vector<char>> ShareFromRankZero(
    Store& store, const std::string& key, int64_t rank, absl::Duration timeout,
    const std::function<absl::StatusOr<std::vector<char>>()>& make) {
  if (rank == 0) {
    absl::StatusOr<std::vector<char>> bytes = make();
    if (!bytes.ok()) return bytes.status();
    if (absl::Status s = store.Set(key, *bytes); !s.ok()) {
      return absl::Status(s.code(), absl::StrFormat("nccl bootstrap: rank 0 publishing the unique "
                                                    "id (key \"%s\"): %s",
                                                    key, s.message()));
    }
    return bytes;
  }
  absl::StatusOr<std::vector<char>> bytes = store.Get(key, timeout);
  if (bytes.ok()) return bytes;
  std::string message = absl::StrFormat(
      "nccl bootstrap: rank %d reading the unique id (key \"%s\") from the store: %s", rank, key,
      bytes.status().message());
  if (absl::IsDeadlineExceeded(bytes.status())) {
    absl::StrAppend(&message, " (did rank 0 start, with the same store and key?)");
  }
  return absl::Status(bytes.status().code(), message);
}

}  // namespace reshard
