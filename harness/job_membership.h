// JobMembership: how the hosts of one multi-host job (`reshard verify
// --store URL --ranks A-B` on each host) agree on what they run, who runs
// which rank, and whether everyone is still there, through the rendezvous
// store they share (collectives/store.h; Redis or a shared directory).
//
//   JobFingerprint job = {{"--mesh", "2,2,2"}, {"--seed", "5"}, ...};
//   absl::StatusOr<std::unique_ptr<JobMembership>> m =
//       JobMembership::Join(store, job, {.num_ranks = 8, .first_rank = 0, .last_rank = 3, ...});
//   ... while running: RESHARD_RETURN_IF_ERROR((*m)->Check());
//   (*m)->Finish("20 passed, 0 failed");   // or (*m)->Abort(why) on an error
//
// Join, in this order (every write atomic: Store::SetIfAbsent):
//   1. a prefix that already holds a finished or abandoned job is refused,
//      naming that job's end (keys are written once per job);
//   2. the fingerprint (every input that decides what is planned and computed)
//      is set if absent, else compared: the first differing field is named;
//   3. each of this host's ranks is claimed; a rank another host claimed is
//      refused, naming both hosts;
//   4. it waits, up to `timeout`, until every rank 0..num_ranks-1 is claimed;
//      the ranks nobody claimed are named; a host whose range overlaps this
//      one's is refused as in 3 (it may have stopped claiming at the rank it
//      lost, after this host had claimed all of its own).
// A host that refuses (2, 3, 4) also records why under the job's "abort" key,
// and every other host's Join or Check returns that reason at its next poll
// (every 100 ms): a conflict is reported on every side within a second.
//
// After Join a thread writes this host's heartbeat (a counter) every
// min(1 s, timeout / 5). Check() fails when the abort key is set, when a
// peer's heartbeat has not moved for `timeout` (the host died or lost the
// store) or when this host cannot use the store: so every host notices a
// peer's or the store's death within about `timeout` plus one poll.
//
// Status codes: InvalidArgument for refusals that are the user's to fix
// (mismatched job, a rank claimed twice, a reused prefix), DeadlineExceeded
// for ranks that never joined, Unavailable for a dead host or store.
#ifndef RESHARD_HARNESS_JOB_MEMBERSHIP_H_
#define RESHARD_HARNESS_JOB_MEMBERSHIP_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "collectives/store.h"

namespace reshard {

// A job's inputs as (name, value) fields, in a fixed order; the names are
// what a mismatch message shows (the CLI uses its flag names).
using JobFingerprint = std::vector<std::pair<std::string, std::string>>;

// "name=value" lines; values are escaped so any byte round-trips.
std::string EncodeFingerprint(const JobFingerprint& job);

// Empty when `stored` (EncodeFingerprint's output) describes `job`; else the
// first field that differs, e.g. "--mesh is 2,2,2 in the job already in the
// store, 2,4 here".
std::string FingerprintDifference(absl::string_view stored, const JobFingerprint& job);

// "0-3, 5, 7-8": ranks (sorted) as ranges.
std::string RankRanges(const std::vector<int64_t>& ranks);

struct MembershipOptions {
  int64_t num_ranks = 0;   // every rank 0..num_ranks-1 must be claimed
  int64_t first_rank = 0;  // this host's ranks: first_rank..last_rank
  int64_t last_rank = -1;  //   (last_rank < first_rank: none)
  // How long Join waits for the other hosts, and how long a peer's heartbeat
  // may stand still before the peer counts as dead.
  absl::Duration timeout = absl::Seconds(30);
  // Names this host in other hosts' messages, e.g. "host a1 (pid 42)".
  std::string host_name;
};

class JobMembership {
 public:
  static absl::StatusOr<std::unique_ptr<JobMembership>> Join(std::shared_ptr<Store> store,
                                                             const JobFingerprint& job,
                                                             const MembershipOptions& options);
  ~JobMembership();  // stops the heartbeat

  // OK while nobody aborted, every peer's heartbeat moves and the store
  // answers; else why not (codes above). Reads the store at most every
  // 100 ms; once failed, it keeps failing with the same status.
  absl::Status Check();

  // Records `why` as the reason the job stopped (the first reason wins), so
  // that every other host's Check fails with it.
  void Abort(const absl::Status& why);

  // Marks this host done: its peers no longer expect its heartbeat, and a
  // later Join on the same prefix is refused naming `summary`.
  void Finish(absl::string_view summary);

 private:
  struct Peer {
    std::string name;
    std::string beat;  // the last heartbeat value seen
    absl::Time moved;  // when it last changed (this host's clock)
  };

  JobMembership(std::shared_ptr<Store> store, const MembershipOptions& options, std::string id);
  absl::Status Claim(const JobFingerprint& job);
  absl::Status AwaitEveryRank();
  // Refuses (and aborts the job) naming both hosts' ranges.
  absl::Status ClaimedTwice(int64_t rank, absl::string_view first, absl::string_view second);
  absl::Status ReadAbort();
  absl::Status CheckPeers();
  void Beat();

  std::shared_ptr<Store> store_;
  const MembershipOptions options_;
  const std::string id_;               // unique per process: host name, pid and a random tag
  std::map<std::string, Peer> peers_;  // by id; filled once every rank is claimed
  absl::Time last_check_ = absl::InfinitePast();
  absl::Status failed_;  // Check's sticky failure

  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status beat_error_ ABSL_GUARDED_BY(mu_);
  std::thread heartbeat_;
};

}  // namespace reshard

#endif  // RESHARD_HARNESS_JOB_MEMBERSHIP_H_
