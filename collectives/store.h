// Store: the key-value rendezvous through which the ranks of a job find each
// other (Gloo's TCP addresses, NCCL's unique id). reshard owns this interface
// so that backends and stores do not depend on each other's types: Gloo sees
// a Store through an adapter, NCCL reads its id from one, and a store may be
// in memory (ranks as threads), a shared directory (processes, or hosts with a
// shared filesystem) or a server reached over the network.
//
//   std::shared_ptr<Store> store = ...;
//   RESHARD_RETURN_IF_ERROR(store->Set("job/rank0/addr", bytes));
//   absl::StatusOr<std::vector<char>> v = store->Get("job/rank1/addr", absl::Seconds(30));
//
// Keys are written once per job (a later Set of the same key replaces the
// value; only heartbeats do that): a store reused across jobs needs a fresh
// key prefix per job. Implementations are thread-safe.
#ifndef RESHARD_COLLECTIVES_STORE_H_
#define RESHARD_COLLECTIVES_STORE_H_

#include <algorithm>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace reshard {

class Store {
 public:
  virtual ~Store() = default;

  // Sets `key` to `value`. Unavailable when the store cannot be written.
  virtual absl::Status Set(absl::string_view key, const std::vector<char>& value) = 0;

  // Waits up to `timeout` for `key` to be set and returns its value.
  // DeadlineExceeded (naming the key) when it is not set in time,
  // Unavailable when the store cannot be read.
  virtual absl::StatusOr<std::vector<char>> Get(absl::string_view key, absl::Duration timeout) = 0;

  // Sets `key` to `value` unless it is set already, atomically: of several
  // callers racing on one key exactly one wins. Returns the value the key
  // holds afterwards (`value` for the winner, the winner's for the others),
  // so that claims and job descriptions can be compared
  // (verify/job_membership.h). Unavailable when the store cannot be used.
  virtual absl::StatusOr<std::vector<char>> SetIfAbsent(absl::string_view key,
                                                        const std::vector<char>& value) = 0;
};

// How a store names the time a Get waited in its DeadlineExceeded message:
// callers pass what is left of a job's deadline, so it is whole milliseconds
// ("5s", not "4.999998919s") and never negative.
inline std::string ShownTimeout(absl::Duration timeout) {
  return absl::FormatDuration(
      absl::Ceil(std::max(timeout, absl::ZeroDuration()), absl::Milliseconds(1)));
}

}  // namespace reshard

#endif  // RESHARD_COLLECTIVES_STORE_H_
