// NewCacheOwnerId: a number no object of this process was given before, for
// caches kept per thread and keyed by the object that filled them
// (BlockBytes' last block, the nccl model's call prices): a later object may
// reuse an address, never an id. Never 0, so 0 can mark an empty entry.
#ifndef RESHARD_PLANNER_COSTS_CACHE_OWNER_ID_H_
#define RESHARD_PLANNER_COSTS_CACHE_OWNER_ID_H_

#include <atomic>
#include <cstdint>

namespace reshard {

inline uint64_t NewCacheOwnerId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace reshard

#endif  // RESHARD_PLANNER_COSTS_CACHE_OWNER_ID_H_
