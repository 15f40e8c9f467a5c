#include "planner/cross_mesh/crossing_test_util.h"

#include <vector>

#include "gtest/gtest.h"
#include "planner/layout/dtype.h"

namespace reshard {
namespace {

// Whether participant `who` receives `box` whole in a round before `round`.
bool ReceivedBefore(const CrossMeshPlan& p, int64_t who, const Box& box, int64_t round) {
  for (size_t e = 0; e < p.routes.size(); ++e) {
    if (p.routes[e].receiver == who && p.routes[e].box == box && p.route_rounds[e] < round) {
      return true;
    }
  }
  return false;
}

}  // namespace

void ExpectRoutable(const CrossMeshPlan& p, const std::string& name) {
  std::vector<Box> held, wanted;
  p.CrossingBoxes(&held, &wanted);
  const int64_t itemsize = ItemSize(p.crossing_src.dtype());
  std::vector<int64_t> into_block(p.participants.size(), 0);
  for (size_t k = 0; k < p.routes.size(); ++k) {
    const SliceRoute& r = p.routes[k];
    if (r.sender == r.receiver) continue;
    if (!BoxContains(held[r.sender], r.box)) {
      EXPECT_TRUE(ReceivedBefore(p, r.sender, r.box, p.route_rounds[k]))
          << name << ": route " << k << " from " << r.sender;
    }
    if (BoxContains(wanted[r.receiver], r.box)) {
      into_block[r.receiver] += itemsize * BoxElements(r.box);
    } else {  // kept aside: the receiver sends it on later
      bool passed_on = false;
      for (size_t e = 0; e < p.routes.size(); ++e) {
        passed_on |= p.routes[e].sender == r.receiver && p.routes[e].box == r.box &&
                     p.route_rounds[e] > p.route_rounds[k];
      }
      EXPECT_TRUE(passed_on) << name << ": route " << k << " to " << r.receiver;
    }
  }
  EXPECT_EQ(into_block, p.ReceiveLowerBoundBytes()) << name;
}

}  // namespace reshard
