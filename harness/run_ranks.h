// One launcher for running a function on every rank of a mesh, on Gloo:
// what `reshard verify`, `reshard bench` and `reshard calibrate` run their
// ranks with.
//
//   threads    every rank a thread of this process (RunRanksOnThreads, an
//              in-process store);
//   processes  every rank a child process: this binary started again with
//              `child_args` plus --rank R --store-dir DIR --job JOB, meeting
//              through a file store in a fresh temporary directory DIR; the
//              command's child side calls RunChildRank with the same
//              function;
//   hosts      as processes, for ranks first_rank..last_rank only, meeting
//              the other hosts' ranks through `store_url` (Redis or a shared
//              directory, NewStoreFromUrl). Each host publishes its ranks'
//              outputs in the store under the job's key and reads the
//              others', so every host gets every rank's output.
//
// A rank's function returns its output as bytes (a process hands them back
// through a file, a host through the store); the caller encodes and decodes
// (harness/rank_result_bytes.h for a verify result).
//
//   std::vector<absl::StatusOr<std::string>> out = RunRanks(mesh, launch,
//       [&](Rank& rank) -> absl::StatusOr<std::string> { ... rank.comm ... });
#ifndef RESHARD_HARNESS_RUN_RANKS_H_
#define RESHARD_HARNESS_RUN_RANKS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "collectives/gloo/gloo_communicator.h"
#include "collectives/store.h"
#include "harness/job_membership.h"
#include "mesh/device_mesh.h"

namespace reshard {

enum class RanksOn { kThreads, kProcesses, kHosts };

struct LaunchOptions {
  RanksOn on = RanksOn::kThreads;
  GlooOptions gloo;
  // processes, hosts: the argv (argv[0] the program name) that runs this
  // command again as one rank, without --rank, --store-dir and --job.
  std::vector<std::string> child_args;
  // hosts: where the ranks of every host meet, and this host's ranks
  // (clipped to the mesh; last_rank -1: to the last).
  std::string store_url;
  int64_t first_rank = 0;
  int64_t last_rank = -1;
  // Names the run in the store (unique per run on a shared store).
  std::string job = "case0";
  // processes, hosts: how long after the start to wait for the ranks (and
  // for the other hosts' outputs) before killing them.
  absl::Duration wait = absl::Seconds(70);
  // hosts: the job the hosts joined (not owned; harness/job_membership.h).
  // While this host waits for its ranks or for the other hosts' outputs it
  // polls Check(), and on a failure (a dead host or store, a stopped job)
  // stops waiting (and its ranks) at once.
  JobMembership* job_membership = nullptr;
};

// What a rank's function gets: its connected communicator, and a way to die
// as a crashed rank would (a thread closes its connections; a process exits
// at once), for fault injection.
struct Rank {
  GlooCommunicator& comm;
  std::function<void()> die;
};
using RankFunction = std::function<absl::StatusOr<std::string>(Rank& rank)>;

// Every rank's output, indexed by rank: the function's bytes, or why the rank
// failed (it could not connect, its function failed, its process died, its
// host never published it).
std::vector<absl::StatusOr<std::string>> RunRanks(const DeviceMesh& mesh,
                                                  const LaunchOptions& options,
                                                  const RankFunction& fn);

// The hidden flags a child rank is started with.
struct ChildRank {
  int64_t rank = 0;
  std::string dir;  // --store-dir: the parent's temporary directory
  std::string job;  // --job
};

// The child's side: connects rank `child.rank` (through `options.store_url`,
// or a file store in child.dir), runs fn, hands its output (or error) to the
// parent and stays connected until every rank is done. Returns the process
// exit code (0, or 1 when the rank failed).
int RunChildRank(const DeviceMesh& mesh, const ChildRank& child, const LaunchOptions& options,
                 const RankFunction& fn);

// The child's side when it cannot even start its rank (e.g. the command's
// own preparation failed): hands `error` to the parent. Returns 1.
int FailChildRank(const ChildRank& child, const absl::Status& error);

// The store a child rank meets its peers in: options.store_url's (several
// hosts), else a file store in `dir` (--store-dir). Commands whose ranks
// connect more communicators than RunChildRank's use it for those too.
absl::StatusOr<std::shared_ptr<Store>> OpenRankStore(const LaunchOptions& options,
                                                     const std::string& dir);

// The first failed rank's error, with its rank ("rank 3: ..."), or OK.
absl::Status FirstRankError(const std::vector<absl::StatusOr<std::string>>& outputs);

}  // namespace reshard

#endif  // RESHARD_HARNESS_RUN_RANKS_H_
