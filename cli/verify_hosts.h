// `reshard verify` on several hosts (--store URL --ranks A-B): what the hosts
// must agree on before any rank starts, and joining that job in the store
// (harness/job_membership.h). Every planning and data input is a
// field of the job, named by its flag, so a mismatch names the flag.
#ifndef RESHARD_CLI_VERIFY_HOSTS_H_
#define RESHARD_CLI_VERIFY_HOSTS_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "harness/job_membership.h"
#include "harness/prepared_case.h"
#include "harness/run_ranks.h"
#include "harness/verify_case.h"

namespace reshard {

// The job of one case (`one` set) or of `random_count` random cases.
struct VerifyJobInputs {
  const VerifyCase* one = nullptr;
  int64_t random_count = 0;
  int64_t max_ranks = 0;  // --random's bound on ranks per case
  int64_t seed = 0;
  PlanMode mode = PlanMode::kNative;
};

JobFingerprint VerifyJob(const VerifyJobInputs& in, const LaunchOptions& o, const Fault& fault);

// Joins the job in the store at o.store_url as the host of ranks
// o.first_rank..o.last_rank of `num_ranks`, waiting up to the timeout for
// the other hosts. Errors as JobMembership::Join's.
absl::StatusOr<std::unique_ptr<JobMembership>> JoinHosts(const JobFingerprint& job,
                                                         int64_t num_ranks, const LaunchOptions& o);

}  // namespace reshard

#endif  // RESHARD_CLI_VERIFY_HOSTS_H_
