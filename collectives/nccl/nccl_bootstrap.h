// How the ranks of an NCCL communicator agree on its unique id: rank 0 makes
// it (ncclGetUniqueId) and publishes it in a rendezvous Store
// (collectives/store.h; collectives/stores/ has in-process and file stores);
// every other rank waits for it. GPU-free (the caller passes the id maker), so the
// default build tests it.
//
//   absl::StatusOr<std::vector<char>> id = ShareFromRankZero(
//       *store, "reshard/nccl_unique_id", rank, absl::Seconds(30),
//       [] { return MakeUniqueIdBytes(); });  // called on rank 0 only
#ifndef RESHARD_COLLECTIVES_NCCL_NCCL_BOOTSTRAP_H_
#define RESHARD_COLLECTIVES_NCCL_NCCL_BOOTSTRAP_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "collectives/store.h"

namespace reshard {

// Rank 0 calls `make` and stores its bytes under `key`; every other rank
// waits up to `timeout` for the key and reads it. Returns the bytes on every
// rank. A key must be used once per store: a store directory left over from
// an earlier run would hand out a stale id, so use a fresh one (or a fresh
// key prefix). DeadlineExceeded when rank 0 does not publish in time,
// Unavailable for another store failure, and make's own error on rank 0.
absl::StatusOr<std::vector<char>> ShareFromRankZero(
    Store& store, const std::string& key, int64_t rank, absl::Duration timeout,
    const std::function<absl::StatusOr<std::vector<char>>()>& make);

}  // namespace reshard

#endif  // RESHARD_COLLECTIVES_NCCL_NCCL_BOOTSTRAP_H_
