#include "harness/verify_runner.h"

#include <utility>
#include <vector>

#include "harness/faulty_communicator.h"
#include "harness/rank_result_bytes.h"

namespace reshard {
namespace {

// One rank's part, its result as bytes; the faulted rank runs through a
// FaultyCommunicator that makes it die at its call.
RankFunction VerifyRank(const PreparedCase& p, const Fault& fault) {
  return [&p, fault](Rank& rank) -> absl::StatusOr<std::string> {
    absl::StatusOr<RankResult> r = absl::UnknownError("not run");
    if (rank.comm.rank() == fault.rank) {
      FaultyCommunicator faulty(rank.comm, fault.at_call, rank.die);
      r = RunRank(p, faulty);
    } else {
      r = RunRank(p, rank.comm);
    }
    if (!r.ok()) return r.status();
    return EncodeRankResult(*r);
  };
}

}  // namespace

CaseReport VerifyOnRanks(const VerifyCase& c, const LaunchOptions& launch, const Fault& fault) {
  absl::StatusOr<PreparedCase> p = Prepare(c);
  if (!p.ok()) return NotRun(p.status());
  std::vector<absl::StatusOr<std::string>> outputs =
      RunRanks(p->src.mesh(), launch, VerifyRank(*p, fault));
  std::vector<absl::StatusOr<RankResult>> results;
  for (size_t r = 0; r < outputs.size(); ++r) {
    results.push_back(outputs[r].ok() ? DecodeRankResult(*outputs[r], *p, r)
                                      : absl::StatusOr<RankResult>(outputs[r].status()));
  }
  return Check(*p, results);
}

CaseReport VerifyOnThreads(const VerifyCase& c, const GlooOptions& options, const Fault& fault) {
  LaunchOptions launch;
  launch.gloo = options;
  return VerifyOnRanks(c, launch, fault);
}

int RunVerifyChild(const VerifyCase& c, const ChildRank& child, const LaunchOptions& launch,
                   const Fault& fault) {
  absl::StatusOr<PreparedCase> p = Prepare(c);
  if (!p.ok()) return FailChildRank(child, p.status());
  return RunChildRank(p->src.mesh(), child, launch, VerifyRank(*p, fault));
}

}  // namespace reshard
