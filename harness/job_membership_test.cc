// Multi-host job membership (harness/job_membership.h) on one
// in-process store shared by "hosts" that are threads: a different job or a
// rank claimed twice is refused on both sides within a second, naming the
// field or the rank (also when the later host got all of its own ranks); ranks nobody claimed are
// named after the timeout; a peer that stops beating, or a store that stops answering, fails Check
// within about the timeout; a finished or stopped job's prefix is refused.
#include "harness/job_membership.h"

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "collectives/store.h"
#include "collectives/stores/in_process_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace reshard {
namespace {

using ::testing::HasSubstr;

const JobFingerprint kJob = {{"--mesh", "2,2,2"}, {"--shape", "13,8"}, {"--seed", "5"}};

MembershipOptions Host(const std::string& name, int64_t first, int64_t last,
                       absl::Duration timeout = absl::Seconds(5)) {
  MembershipOptions o;
  o.num_ranks = 8;
  o.first_rank = first;
  o.last_rank = last;
  o.timeout = timeout;
  o.host_name = name;
  return o;
}

// A store whose every call fails once `dead` is set, as a stopped server.
class DyingStore final : public Store {
 public:
  explicit DyingStore(std::shared_ptr<Store> inner) : inner_(std::move(inner)) {}
  absl::Status Set(absl::string_view key, const std::vector<char>& value) override {
    if (dead) return absl::UnavailableError("connection refused");
    return inner_->Set(key, value);
  }
  absl::StatusOr<std::vector<char>> Get(absl::string_view key, absl::Duration timeout) override {
    if (dead) return absl::UnavailableError("connection refused");
    return inner_->Get(key, timeout);
  }
  absl::StatusOr<std::vector<char>> SetIfAbsent(absl::string_view key,
                                                const std::vector<char>& value) override {
    if (dead) return absl::UnavailableError("connection refused");
    return inner_->SetIfAbsent(key, value);
  }
  std::atomic<bool> dead{false};

 private:
  std::shared_ptr<Store> inner_;
};

// Host A joins first (in a thread) and waits for the rest; host B then joins
// with `b_job` and ranks b_first..b_last. Both outcomes and when A's came.
struct TwoHosts {
  absl::Status a, b;
  absl::Duration a_after_b;  // how long after B's refusal A's Join returned
};
TwoHosts JoinTwo(const JobFingerprint& b_job, int64_t a_last, int64_t b_first) {
  std::shared_ptr<Store> store = NewInProcessStore();
  TwoHosts out;
  absl::Time a_done;
  std::thread a([&] {
    out.a = JobMembership::Join(store, kJob, Host("host a", 0, a_last)).status();
    a_done = absl::Now();
  });
  absl::SleepFor(absl::Milliseconds(200));  // A is waiting for ranks 4-7
  out.b = JobMembership::Join(store, b_job, Host("host b", b_first, 7)).status();
  const absl::Time b_done = absl::Now();
  a.join();
  out.a_after_b = a_done - b_done;
  return out;
}

TEST(JobMembership, ADifferentJobIsRefusedOnBothSidesWithinASecondNamingTheField) {
  JobFingerprint other = kJob;
  other[1].second = "13,9";
  const TwoHosts r = JoinTwo(other, 3, 4);
  EXPECT_EQ(r.b.code(), absl::StatusCode::kInvalidArgument) << r.b;
  EXPECT_THAT(r.b.message(), HasSubstr("--shape is '13,8' in the job already in the store, "
                                       "'13,9' here"));
  EXPECT_EQ(r.a.code(), absl::StatusCode::kInvalidArgument) << r.a;
  EXPECT_THAT(r.a.message(), HasSubstr("host b: the hosts disagree on the job: --shape"));
  EXPECT_LT(r.a_after_b, absl::Seconds(1));
}

TEST(JobMembership, ARankClaimedTwiceIsRefusedOnBothSidesWithinASecondNamingIt) {
  const TwoHosts r = JoinTwo(kJob, 4, 4);
  EXPECT_EQ(r.b.code(), absl::StatusCode::kInvalidArgument) << r.b;
  EXPECT_THAT(r.b.message(),
              HasSubstr("rank 4 is claimed by two hosts: host a (ranks 0-4) and host b "
                        "(ranks 4-7)"));
  EXPECT_EQ(r.a.code(), absl::StatusCode::kInvalidArgument) << r.a;
  EXPECT_THAT(r.a.message(), HasSubstr("rank 4 is claimed by two hosts"));
  EXPECT_LT(r.a_after_b, absl::Seconds(1));
}

// A store that holds back one SetIfAbsent of `key` until `release` is set.
class SlowKeyStore final : public Store {
 public:
  SlowKeyStore(std::shared_ptr<Store> inner, std::string key)
      : inner_(std::move(inner)), key_(std::move(key)) {}
  absl::Status Set(absl::string_view key, const std::vector<char>& value) override {
    return inner_->Set(key, value);
  }
  absl::StatusOr<std::vector<char>> Get(absl::string_view key, absl::Duration timeout) override {
    return inner_->Get(key, timeout);
  }
  absl::StatusOr<std::vector<char>> SetIfAbsent(absl::string_view key,
                                                const std::vector<char>& value) override {
    const absl::Time give_up = absl::Now() + absl::Seconds(3);
    while (key == key_ && !release && absl::Now() < give_up) absl::SleepFor(absl::Milliseconds(5));
    return inner_->SetIfAbsent(key, value);
  }
  std::atomic<bool> release{false};

 private:
  std::shared_ptr<Store> inner_;
  const std::string key_;
};

// Host A (ranks 0-5) claims 0-3, then host B claims all of 4-7 before A
// reaches rank 4: every rank is claimed, yet B must not start.
TEST(JobMembership, AnOverlapIsRefusedOnBothSidesWhenTheLaterHostClaimedAllItsRanks) {
  std::shared_ptr<Store> shared = NewInProcessStore();
  auto a_store = std::make_shared<SlowKeyStore>(shared, "job/claim/4");
  absl::Status a;
  std::thread host_a(
      [&] { a = JobMembership::Join(a_store, kJob, Host("host a", 0, 5)).status(); });
  absl::SleepFor(absl::Milliseconds(200));  // A holds 0-3 and waits at 4
  const absl::Status b = JobMembership::Join(shared, kJob, Host("host b", 4, 7)).status();
  a_store->release = true;
  host_a.join();
  EXPECT_EQ(b.code(), absl::StatusCode::kInvalidArgument) << b;
  EXPECT_THAT(b.message(), HasSubstr("rank 4 is claimed by two hosts: host a (ranks 0-5) and "
                                     "host b (ranks 4-7)"));
  EXPECT_EQ(a.code(), absl::StatusCode::kInvalidArgument) << a;
  EXPECT_THAT(a.message(), HasSubstr("claimed by two hosts"));
}

TEST(JobMembership, TheSameJobOnDisjointRanksJoins) {
  const TwoHosts r = JoinTwo(kJob, 3, 4);
  EXPECT_TRUE(r.a.ok()) << r.a;
  EXPECT_TRUE(r.b.ok()) << r.b;
}

TEST(JobMembership, RanksNobodyClaimedAreNamedAfterTheTimeout) {
  std::shared_ptr<Store> store = NewInProcessStore();
  const absl::Time start = absl::Now();
  absl::Status s =
      JobMembership::Join(store, kJob, Host("host a", 0, 2, absl::Milliseconds(500))).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_THAT(s.message(), HasSubstr("ranks 3-7 never joined within 500ms"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  // A host that comes late finds the job stopped, and why.
  s = JobMembership::Join(store, kJob, Host("host b", 3, 7)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("holds a job that already stopped (host a: ranks 3-7 never"));
}

// Both hosts joined; returns them.
std::pair<std::unique_ptr<JobMembership>, std::unique_ptr<JobMembership>> Joined(
    std::shared_ptr<Store> store, absl::Duration timeout) {
  std::unique_ptr<JobMembership> a;
  std::thread t([&] { a = *JobMembership::Join(store, kJob, Host("host a", 0, 3, timeout)); });
  std::unique_ptr<JobMembership> b =
      *JobMembership::Join(store, kJob, Host("host b", 4, 7, timeout));
  t.join();
  return {std::move(a), std::move(b)};
}

// Polls Check until it fails or `limit` passes; how long it took.
absl::Duration UntilCheckFails(JobMembership& m, absl::Duration limit, absl::Status* s) {
  const absl::Time start = absl::Now();
  while ((*s = m.Check()).ok() && absl::Now() - start < limit) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  return absl::Now() - start;
}

TEST(JobMembership, APeerThatStopsBeatingFailsCheckWithinAboutTheTimeout) {
  auto [a, b] = Joined(NewInProcessStore(), absl::Milliseconds(500));
  EXPECT_TRUE(a->Check().ok());
  b.reset();  // host b dies: its heartbeat stops, no Finish
  absl::Status s;
  const absl::Duration took = UntilCheckFails(*a, absl::Seconds(5), &s);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_THAT(s.message(), HasSubstr("host b (ranks 4-7) wrote no heartbeat for"));
  EXPECT_LT(took, absl::Seconds(1));  // timeout + one heartbeat interval + one poll
}

TEST(JobMembership, AFinishedPeerIsNotDeadAndItsPrefixIsNotReused) {
  std::shared_ptr<Store> store = NewInProcessStore();
  auto [a, b] = Joined(store, absl::Milliseconds(300));
  b->Finish("1 passed, 0 failed");
  b.reset();
  absl::Status s;
  UntilCheckFails(*a, absl::Seconds(1), &s);
  EXPECT_TRUE(s.ok()) << s;
  s = JobMembership::Join(store, kJob, Host("host c", 0, 7)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(),
              HasSubstr("holds a job that already finished (host b: 1 passed, 0 failed"));
}

TEST(JobMembership, AStoreThatStopsAnsweringFailsCheckOnEveryHost) {
  auto inner = NewInProcessStore();
  auto store = std::make_shared<DyingStore>(inner);
  auto [a, b] = Joined(store, absl::Seconds(5));
  store->dead = true;
  for (JobMembership* m : {a.get(), b.get()}) {
    absl::Status s;
    const absl::Duration took = UntilCheckFails(*m, absl::Seconds(5), &s);
    EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
    EXPECT_THAT(s.message(), HasSubstr("the store stopped answering: connection refused"));
    EXPECT_LT(took, absl::Seconds(1));
  }
}

TEST(JobMembership, AnAbortReachesEveryOtherHostsCheck) {
  auto [a, b] = Joined(NewInProcessStore(), absl::Seconds(5));
  b->Abort(absl::UnavailableError("rank 5 lost its store"));
  absl::Status s;
  UntilCheckFails(*a, absl::Seconds(1), &s);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_EQ(s.message(), "host b: rank 5 lost its store");
}

TEST(Fingerprint, EqualJobsDifferInNothingAndAnyByteRoundTrips) {
  const JobFingerprint job = {{"--src", "S(0)\n%0A="}, {"--dst", ""}};
  EXPECT_EQ(FingerprintDifference(EncodeFingerprint(job), job), "");
  EXPECT_THAT(FingerprintDifference(EncodeFingerprint(job), {{"--src", "S(0)\n%0A="}}),
              HasSubstr("--dst is '' in the job already in the store and not given here"));
}

TEST(RankRanges, RunsOfRanksBecomeRanges) {
  EXPECT_EQ(RankRanges({0, 1, 2, 3, 5, 7, 8}), "0-3, 5, 7-8");
  EXPECT_EQ(RankRanges({}), "");
}

}  // namespace
}  // namespace reshard
