#include "collectives/nccl_bootstrap.h"

#include <chrono>
#include <exception>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gloo/rendezvous/store.h"

namespace reshard {

namespace {

// Gloo's stores throw; a timeout says so in its message.
absl::Status FromStoreException(const std::string& key, int64_t rank, const std::exception& e) {
  const std::string message = absl::StrFormat(
      "nccl bootstrap: rank %d reading the unique id (key \"%s\") from the store: %s", rank, key,
      e.what());
  if (absl::StrContains(absl::AsciiStrToLower(e.what()), "timeout") ||
      absl::StrContains(absl::AsciiStrToLower(e.what()), "timed out")) {
    return absl::DeadlineExceededError(
        absl::StrCat(message, " (did rank 0 start, with the same store and key?)"));
  }
  return absl::UnavailableError(message);
}

}  // namespace

absl::StatusOr<std::vector<char>> ShareFromRankZero(
    gloo::rendezvous::Store& store, const std::string& key, int64_t rank, absl::Duration timeout,
    const std::function<absl::StatusOr<std::vector<char>>()>& make) {
  if (rank == 0) {
    absl::StatusOr<std::vector<char>> bytes = make();
    if (!bytes.ok()) return bytes.status();
    try {
      store.set(key, *bytes);
    } catch (const std::exception& e) {
      return absl::UnavailableError(absl::StrFormat(
          "nccl bootstrap: rank 0 publishing the unique id (key \"%s\"): %s", key, e.what()));
    }
    return bytes;
  }
  try {
    store.wait({key}, std::chrono::milliseconds(absl::ToInt64Milliseconds(timeout)));
    return store.get(key);
  } catch (const std::exception& e) {
    return FromStoreException(key, rank, e);
  }
}

}  // namespace reshard
