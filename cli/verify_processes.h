// `reshard verify` with one process per rank: this binary is started again
// for each rank (hidden flags --rank, --store-dir, --job), and the ranks meet
// through a store:
//   * on one host (--processes): a file store in a fresh temporary directory;
//   * on several hosts (--store URL --ranks A-B): Redis or a shared directory
//     (stores/redis_store.h, NewStoreFromUrl). Each host runs its ranks A..B,
//     publishes their results (or why they failed) in the same store under
//     the case's job key, reads the other hosts' results and checks them
//     all, so every host prints the same verdict.
#ifndef RESHARD_CLI_VERIFY_PROCESSES_H_
#define RESHARD_CLI_VERIFY_PROCESSES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "collectives/gloo/gloo_communicator.h"
#include "collectives/verify/job_membership.h"
#include "collectives/verify/verify.h"

namespace reshard {

struct ProcessOptions {
  GlooOptions gloo;
  Fault fault;
  // Where ranks meet; empty: a temporary directory on this host.
  std::string store_url;
  // The ranks this host runs (clipped to the mesh); last_rank -1: all of them.
  int64_t first_rank = 0;
  int64_t last_rank = -1;
  // Several hosts: the job they joined (not owned). While this host waits for
  // its ranks or for the other hosts' results it polls job->Check(), and on a
  // failure (a dead host or store, a stopped job) stops waiting at once.
  JobMembership* job = nullptr;
};

// Runs this host's ranks of `c` as child processes and checks every rank's
// result. `job` names the case in the store (unique per case and run).
CaseReport VerifyInProcesses(const VerifyCase& c, const ProcessOptions& options,
                             const std::string& job);

// The child's side: rank `rank` of `c`; its result (or error) goes to files
// in `dir`. Returns the process exit code.
int RunChildRank(const VerifyCase& c, int64_t rank, const std::string& dir,
                 const ProcessOptions& options, const std::string& job);

}  // namespace reshard

#endif  // RESHARD_CLI_VERIFY_PROCESSES_H_
