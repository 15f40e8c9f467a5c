// `reshard verify` on several hosts (--store URL --ranks A-B): what the hosts
// must agree on before any rank starts, joining that job in the store
// (harness/job_membership.h) and checking that it goes on. Every planning
// and data input is a field of the job, named by its flag, so a mismatch
// names the flag. Same-mesh cases (verify_command.cc) and cross-mesh ones
// (verify_cross_mesh.cc) share it.
#ifndef RESHARD_CLI_VERIFY_VERIFY_HOSTS_H_
#define RESHARD_CLI_VERIFY_VERIFY_HOSTS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "harness/cross_mesh_case.h"
#include "harness/job_membership.h"
#include "harness/prepared_case.h"
#include "harness/run_ranks.h"
#include "harness/verify_case.h"

namespace reshard {

// The job of one case (`one` set), of one cross-mesh case (`cross` set, its
// rank lists spelled out: hosts that leave a default list out and hosts that
// give it agree) or of `random_count` random cases.
struct VerifyJobInputs {
  const VerifyCase* one = nullptr;
  int64_t random_count = 0;
  int64_t max_ranks = 0;  // --random's bound on ranks per case
  int64_t seed = 0;
  PlanMode mode = PlanMode::kNative;
  const CrossMeshCase* cross = nullptr;
};

JobFingerprint VerifyJob(const VerifyJobInputs& in, const LaunchOptions& o, const Fault& fault);

// Joins the job in the store at o.store_url as the host of ranks
// o.first_rank..o.last_rank of `num_ranks`, waiting up to the timeout for
// the other hosts. Errors as JobMembership::Join's.
absl::StatusOr<std::unique_ptr<JobMembership>> JoinHosts(const JobFingerprint& job,
                                                         int64_t num_ranks, const LaunchOptions& o);

// A failed join as verify's error: a refusal (another job in the store, a
// rank claimed twice, a reused prefix) is bad input (exit 2); ranks that
// never joined or a dead store fail (exit 1).
absl::Status JoinFailed(const absl::Status& s);

// Where one case's ranks run: this host's share on several hosts (a store
// URL in `launch`), else processes (`processes`) or threads, each process
// running `child_args`, in the store's job `job`. Every rank gives up on its
// peers after the Gloo timeout, so the launcher waits twice that, and for
// start-up.
LaunchOptions CaseLaunch(LaunchOptions launch, bool processes, std::vector<std::string> child_args,
                         const std::string& job);

// Several hosts: after a case, whether the job goes on (OK when `job` is
// null: one host); a failure (a dead host or store) is recorded for the other
// hosts too.
absl::Status JobGoesOn(JobMembership* job);

}  // namespace reshard

#endif  // RESHARD_CLI_VERIFY_VERIFY_HOSTS_H_
