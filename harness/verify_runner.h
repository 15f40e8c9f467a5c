// Verifying a case end to end: Prepare (harness/prepared_case.h), run every
// rank where the launch options say (harness/run_ranks.h: threads,
// processes or hosts), Check (harness/check.h). What `reshard verify` runs
// for each case.
//
//   CaseReport r = VerifyCase(RandomCase(7, 8), LaunchOptions());
//   if (r.outcome == Outcome::kFailed) std::cerr << r.detail;
#ifndef RESHARD_HARNESS_VERIFY_RUNNER_H_
#define RESHARD_HARNESS_VERIFY_RUNNER_H_

#include "collectives/gloo/gloo_communicator.h"
#include "harness/check.h"
#include "harness/prepared_case.h"
#include "harness/run_ranks.h"
#include "harness/verify_case.h"

namespace reshard {

// Every rank of `c` run as `launch` says and checked. A faulted rank dies
// (Rank::die) just before its collective call fault.at_call. With processes
// or hosts, the children must call RunVerifyChild.
CaseReport VerifyOnRanks(const VerifyCase& c, const LaunchOptions& launch,
                         const Fault& fault = Fault());

// The same with every rank a thread of this process.
CaseReport VerifyOnThreads(const VerifyCase& c, const GlooOptions& options,
                           const Fault& fault = Fault());

// A child rank's side of VerifyOnRanks. Returns the process exit code.
int RunVerifyChild(const VerifyCase& c, const ChildRank& child, const LaunchOptions& launch,
                   const Fault& fault);

}  // namespace reshard

#endif  // RESHARD_HARNESS_VERIFY_RUNNER_H_
