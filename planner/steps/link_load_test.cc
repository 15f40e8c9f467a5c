// LinkLoadOfRoutes (link_load.h): NVLink and NIC load per participant, with
// NCCL's PXN rails, on small routes worked by hand.
#include "planner/steps/link_load.h"

#include <vector>

#include "gtest/gtest.h"

namespace reshard {
namespace {

SliceRoute Route(int64_t sender, int64_t receiver, int64_t elements) {
  return {sender, receiver, {Slice{0, elements}}};
}

// Ranks 0, 1 on host 0 and 8, 9 on host 1 (participants 0-3). 0 -> 1 (10)
// stays on NVLink; 0 -> 9 (20) leaves host 0 on rail 1 after an NVLink hop
// to GPU 1, which sends 1 -> 9 (5) on its own rail: rail 1 carries 25, rank
// 9 receives 25; 8 -> 0 (7) on rail 0. Rank 0's NVLink sends 10 + 20.
TEST(LinkLoadTest, CountsEachLinkAndPxnsHop) {
  const std::vector<int64_t> ranks = {0, 1, 8, 9};
  const std::vector<SliceRoute> routes = {Route(0, 1, 10), Route(0, 3, 20), Route(1, 3, 5),
                                          Route(2, 0, 7), Route(2, 2, 100)};
  const LinkLoad load = LinkLoadOfRoutes(routes, ranks, 8);
  EXPECT_EQ(load.intra, 30);
  EXPECT_EQ(load.inter, 25);
  EXPECT_EQ(load.intra_messages, 1);
  EXPECT_EQ(load.inter_messages, 2);  // rank 9 receives two
}

// Two senders of host 0 to two hosts' GPUs of local rank 0 share NIC 0:
// 6 + 6 through it, though each receiver gets 6.
TEST(LinkLoadTest, RemotePeersOfOneLocalRankShareOneNic) {
  const std::vector<int64_t> ranks = {0, 1, 8, 16};
  const LinkLoad load = LinkLoadOfRoutes({Route(0, 2, 6), Route(1, 3, 6)}, ranks, 8);
  EXPECT_EQ(load.inter, 12);
  EXPECT_EQ(load.intra, 6);  // rank 1's hop to GPU 0
  EXPECT_EQ(load.inter_messages, 1);
  EXPECT_EQ(load.intra_messages, 0);
}

// A crossing's participants need not ascend: the same routes among the
// same ranks, numbered otherwise, load each link alike.
TEST(LinkLoadTest, RanksInAnyOrderLoadAlike) {
  const std::vector<int64_t> ranks = {8, 0, 9, 1};  // participant i is ranks[i]
  const std::vector<SliceRoute> routes = {Route(1, 3, 10), Route(1, 2, 20), Route(3, 2, 5),
                                          Route(0, 1, 7)};
  const LinkLoad load = LinkLoadOfRoutes(routes, ranks, 8);
  EXPECT_EQ(load.intra, 30);
  EXPECT_EQ(load.inter, 25);
  EXPECT_EQ(load.intra_messages, 1);
  EXPECT_EQ(load.inter_messages, 2);
}

// Two GPUs of host 0 (ranks 0, 1) send 10 each to rank 2 of host 1: both
// through rail 0, 20 on one NIC and 20 into rank 2's. However the rails
// were assigned, host 0's 20 leave over its 2 NICs and host 1's 20 arrive
// over its 2 participants: 10 at least, so staging may pay.
TEST(LinkLoadTest, NicLoadOfAFunnel) {
  LinkLoadTally tally;
  tally.Reset({0, 1, 2, 3}, 2);
  tally.Add({0, 2, 10});
  tally.Add({1, 2, 10});
  const NicLoad nic = tally.Nic();
  EXPECT_EQ(nic.direct, 20);
  EXPECT_EQ(nic.least, 10);
  EXPECT_TRUE(nic.MayStage());
  // Spread over both rails and both receivers, nothing is left to gain.
  tally.Reset({0, 1, 2, 3}, 2);
  tally.Add({0, 2, 10});
  tally.Add({1, 3, 10});
  EXPECT_FALSE(tally.Nic().MayStage());
}

// Hosts of 2^31 - 1 devices, ranks on three of them: the NICs are counted
// sparsely, and load as the same routes among ranks 0, 1, 8, 16 on hosts of
// 8 (the same hosts and rails).
TEST(LinkLoadTest, HugeHostsLoadAsSmallOnes) {
  const int64_t huge = 2147483647;
  const std::vector<SliceRoute> routes = {Route(0, 2, 6), Route(1, 3, 6), Route(2, 0, 3)};
  const LinkLoad small = LinkLoadOfRoutes(routes, {0, 1, 8, 16}, 8);
  const LinkLoad large = LinkLoadOfRoutes(routes, {0, 1, huge, 2 * huge}, huge);
  EXPECT_EQ(large.inter, small.inter);
  EXPECT_EQ(large.intra, small.intra);
  EXPECT_EQ(large.inter_messages, small.inter_messages);
  EXPECT_EQ(large.intra_messages, small.intra_messages);
  EXPECT_EQ(small.inter, 12);  // NIC 0 of host 0 carries both sends
}

TEST(LinkLoadTest, OneRailIsOneLocalRank) {
  EXPECT_TRUE(OnOneRail({0, 8, 16}, 8));
  EXPECT_FALSE(OnOneRail({0, 9}, 8));
  EXPECT_FALSE(OnOneRail({0, 1}, 8));
}

}  // namespace
}  // namespace reshard
