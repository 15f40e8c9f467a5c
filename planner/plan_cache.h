// PlanCache: a thread-safe, size-bounded cache of plans, keyed by everything
// that changes the answer (mesh, shape, dtype, both states and how they were
// written, every PlanOptions field, the cost model by its fingerprint). Least recently used plans
// go first.
//
//   PlanCache cache(/*capacity=*/4096);
//   absl::StatusOr<std::shared_ptr<const Plan>> plan = cache.GetOrPlan(request);
//
// Errors are not cached.
#ifndef RESHARD_PLANNER_PLAN_CACHE_H_
#define RESHARD_PLANNER_PLAN_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "planner/layout/dist_spec.h"
#include "planner/plan_request.h"
#include "planner/planner.h"
#include "planner/steps/plan.h"

namespace reshard {

class PlanCache {
 public:
  explicit PlanCache(size_t capacity = 4096);
  ~PlanCache();
  PlanCache(const PlanCache&) = delete;
  PlanCache& operator=(const PlanCache&) = delete;

  absl::StatusOr<std::shared_ptr<const Plan>> GetOrPlan(const PlanRequest& request) {
    return GetOrPlan(request.src, request.dst, request.options);
  }
  absl::StatusOr<std::shared_ptr<const Plan>> GetOrPlan(const DistSpec& src, const DistSpec& dst,
                                                        const PlanOptions& options);

  struct Stats {
    int64_t hits = 0;
    int64_t misses = 0;
    size_t size = 0;
  };
  Stats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace reshard

#endif  // RESHARD_PLANNER_PLAN_CACHE_H_
