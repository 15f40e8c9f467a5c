#include "cli/verify/verify_hosts.h"

#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "cli/commands.h"
#include "collectives/stores/redis_store.h"

namespace reshard {
namespace {

// "host NAME pid N": both hosts of the network-namespace test share a name.
std::string ThisHost() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) name[0] = '\0';
  return absl::StrFormat("host %s pid %d", name[0] != '\0' ? name : "?", getpid());
}

}  // namespace

JobFingerprint VerifyJob(const VerifyJobInputs& in, const LaunchOptions& o, const Fault& fault) {
  JobFingerprint job;
  if (in.one != nullptr) {
    const VerifyCase& c = *in.one;
    job = {{"--mesh", absl::StrJoin(c.mesh, ",")},
           {"--shape", absl::StrJoin(c.shape, ",")},
           {"--dtype", std::string(DTypeName(c.dtype))},
           {"--src", c.src},
           {"--dst", c.dst},
           {"--algorithm", std::string(AlgorithmName(c.algorithm))}};
  } else if (in.cross != nullptr) {
    const CrossMeshCase& c = *in.cross;
    job = {{"--mesh", absl::StrJoin(c.mesh, ",")},
           {"--dst-mesh", absl::StrJoin(c.dst_mesh, ",")},
           {"--src-ranks", absl::StrJoin(c.src_ranks, ",")},
           {"--dst-ranks", absl::StrJoin(c.dst_ranks, ",")},
           {"--shape", absl::StrJoin(c.shape, ",")},
           {"--dtype", std::string(DTypeName(c.dtype))},
           {"--src", c.src},
           {"--dst", c.dst},
           {"--cost-model", c.cost_model == nullptr ? "default" : c.cost_model->fingerprint()}};
  } else {
    job = {{"--random", absl::StrCat(in.random_count)},
           {"--max-ranks", absl::StrCat(in.max_ranks)}};
  }
  job.insert(job.end(), {{"--mode", std::string(PlanModeName(in.mode))},
                         {"--seed", absl::StrCat(in.seed)},
                         {"--timeout", absl::FormatDuration(o.gloo.timeout)},
                         {"--kill-rank", fault.rank < 0 ? "none" : absl::StrCat(fault.rank)},
                         {"--kill-at", absl::StrCat(fault.at_call)}});
  return job;
}

absl::StatusOr<std::unique_ptr<JobMembership>> JoinHosts(const JobFingerprint& job,
                                                         int64_t num_ranks,
                                                         const LaunchOptions& o) {
  absl::StatusOr<std::shared_ptr<Store>> store = NewStoreFromUrl(o.store_url, o.gloo.timeout);
  if (!store.ok()) return store.status();
  MembershipOptions m;
  m.num_ranks = num_ranks;
  m.first_rank = o.first_rank;
  m.last_rank = o.last_rank < 0 ? num_ranks - 1 : o.last_rank;
  m.timeout = o.gloo.timeout;
  m.host_name = ThisHost();
  return JobMembership::Join(*std::move(store), job, m);
}

absl::Status JoinFailed(const absl::Status& s) {
  return Fail(s.message(),
              s.code() == absl::StatusCode::kInvalidArgument ? kExitBadInput : kExitInternal);
}

absl::Status JobGoesOn(JobMembership* job) {
  if (job == nullptr) return absl::OkStatus();
  absl::Status alive = job->Check();
  if (!alive.ok()) job->Abort(alive);
  return alive;
}

LaunchOptions CaseLaunch(LaunchOptions launch, bool processes, std::vector<std::string> child_args,
                         const std::string& job) {
  launch.on = !launch.store_url.empty() ? RanksOn::kHosts
              : processes               ? RanksOn::kProcesses
                                        : RanksOn::kThreads;
  launch.child_args = std::move(child_args);
  launch.job = job;
  launch.wait = 2 * launch.gloo.timeout + absl::Seconds(10);
  return launch;
}

}  // namespace reshard
