// Who sends which slice (planner/steps/slice_routes.h, spec §11.1): every
// receiver gets exactly what it lacks, each element once, from a holder;
// replicas share the sending by the balancing rule. Expected routes are
// derived by hand in the comments.
#include "planner/steps/slice_routes.h"

#include <cstdint>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace reshard {
namespace {

Box Rows(int64_t begin, int64_t end) { return {Slice{begin, end - begin}}; }

// (sender, receiver, first row, rows) of every route.
std::vector<std::vector<int64_t>> Flat(const std::vector<SliceRoute>& routes) {
  std::vector<std::vector<int64_t>> out;
  for (const SliceRoute& r : routes) {
    out.push_back({r.sender, r.receiver, r.box[0].offset, r.box[0].size});
  }
  return out;
}

using Route = std::vector<int64_t>;
using ::testing::ElementsAre;

// Rows 0-3 held by participants 0 and 1, rows 4-7 by 2 and 3; everyone
// wants all 8 (an all_gather over replicas). Demands, all of 4 rows, in
// receiver order: 0 needs 4-7 (holders 2, 3: both idle, 2 is nearer), 1
// needs 4-7 (3 is idle), 2 needs 0-3 (holders 0, 1 idle, 1 nearer), 3 needs
// 0-3 (0 idle). Each sends 4 rows: the most any receives.
TEST(RouteSlicesTest, ReplicasShareTheSending) {
  const std::vector<Box> held = {Rows(0, 4), Rows(0, 4), Rows(4, 8), Rows(4, 8)};
  const std::vector<Box> wanted(4, Rows(0, 8));
  EXPECT_THAT(
      Flat(RouteSlices(held, wanted)),
      ElementsAre(Route{0, 0, 0, 4}, Route{2, 0, 4, 4}, Route{1, 1, 0, 4}, Route{3, 1, 4, 4},
                  Route{1, 2, 0, 4}, Route{2, 2, 4, 4}, Route{0, 3, 0, 4}, Route{3, 3, 4, 4}));
  const RouteLoad load = LoadOfRoutes(RouteSlices(held, wanted), 4);
  EXPECT_EQ(load.max_sent, 4);
  EXPECT_EQ(load.max_received, 4);
  EXPECT_EQ(load.max_messages, 1);
  EXPECT_EQ(load.total_sent, 16);
}

// torch.chunk of 5 rows over 4: 2, 2, 1, 0. Participant 3 holds nothing and
// sends nothing; it receives all 5 rows, from their only holders.
TEST(RouteSlicesTest, UnevenAndEmptyBlocks) {
  const std::vector<Box> held = {Rows(0, 2), Rows(2, 4), Rows(4, 5), Rows(5, 5)};
  const std::vector<Box> wanted(4, Rows(0, 5));
  const std::vector<SliceRoute> routes = RouteSlices(held, wanted);
  for (const SliceRoute& r : routes) EXPECT_NE(r.sender, 3);
  const RouteLoad load = LoadOfRoutes(routes, 4);
  EXPECT_EQ(load.max_received, 5);            // participant 3
  EXPECT_EQ(load.max_sent, 6);                // participants 0 and 1: 2 rows to each of 3
  EXPECT_EQ(load.total_sent, 3 + 3 + 4 + 5);  // what the 4 receivers lack
}

// Forced sends (one holder) are counted before any choice: rows 0-3 have one
// holder (0), rows 4-7 two (0 is not one of them: 1 and 2). Receiver 3 wants
// rows 0-7: 0-3 from 0 (forced); 4-7 from 1 or 2, both idle, 2 nearer.
// Receiver 1 wants rows 4-5 of its own copy (local) and nothing else.
TEST(RouteSlicesTest, ForcedSendsFirstThenNearestIdle) {
  const std::vector<Box> held = {Rows(0, 4), Rows(4, 8), Rows(4, 8), Rows(8, 8)};
  const std::vector<Box> wanted = {Rows(0, 0), Rows(4, 6), Rows(0, 0), Rows(0, 8)};
  EXPECT_THAT(Flat(RouteSlices(held, wanted)),
              ElementsAre(Route{1, 1, 4, 2}, Route{0, 3, 0, 4}, Route{2, 3, 4, 4}));
}

// Larger demands choose first: receivers 0 and 1 hold nothing; 0 wants 2
// rows, 1 wants 6, from the replicas 2 and 3. The 6 rows go first (to the
// nearer idle holder, 2), then the 2 rows to the idle one, 3.
TEST(RouteSlicesTest, LargestDemandChoosesFirst) {
  const std::vector<Box> held = {Rows(0, 0), Rows(0, 0), Rows(0, 8), Rows(0, 8)};
  const std::vector<Box> wanted = {Rows(0, 2), Rows(0, 6), Rows(0, 0), Rows(0, 0)};
  EXPECT_THAT(Flat(RouteSlices(held, wanted)), ElementsAre(Route{3, 0, 0, 2}, Route{2, 1, 0, 6}));
}

// Two-dim boxes: a receiver's pieces tile what it wants, each element once.
TEST(RouteSlicesTest, PiecesTileTheWantedBoxes) {
  // A 6 x 4 tensor in 2 x 2 blocks (rows 0-2 / 3-5, columns 0-1 / 2-3), held
  // by participants 0..3; wanted: column halves by participants 0 and 1, all
  // of it by 2, a 2 x 2 corner by 3.
  const std::vector<Box> held = {{Slice{0, 3}, Slice{0, 2}},
                                 {Slice{0, 3}, Slice{2, 2}},
                                 {Slice{3, 3}, Slice{0, 2}},
                                 {Slice{3, 3}, Slice{2, 2}}};
  const std::vector<Box> wanted = {{Slice{0, 6}, Slice{0, 2}},
                                   {Slice{0, 6}, Slice{2, 2}},
                                   {Slice{0, 6}, Slice{0, 4}},
                                   {Slice{2, 2}, Slice{1, 2}}};
  std::vector<int64_t> got(4, 0);
  for (const SliceRoute& r : RouteSlices(held, wanted)) {
    got[r.receiver] += BoxElements(r.box);
    // Inside what the sender holds and what the receiver wants.
    const Box zero(2);
    EXPECT_EQ(BoxElements(MeetBoxes(r.box, held[r.sender], zero)), BoxElements(r.box));
    EXPECT_EQ(BoxElements(MeetBoxes(r.box, wanted[r.receiver], zero)), BoxElements(r.box));
  }
  EXPECT_THAT(got, ElementsAre(12, 12, 24, 4));
}

}  // namespace
}  // namespace reshard
