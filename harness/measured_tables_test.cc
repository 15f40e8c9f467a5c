// Calibrate's samples as measured tables (harness/measured_tables.h): one table
// per kind and group size, groups of one size merged by the median, and each
// size predicted with its sample held out.
#include "harness/measured_tables.h"

#include <cmath>

#include "gtest/gtest.h"
#include "mesh/device_mesh.h"

namespace reshard {
namespace {

// Mesh 2,2: mesh dims {0} and {1} are both groups of 2, {0,1} a group of 4.
TEST(MeasuredTablesTest, GroupsOfOneSizeShareATableWithTheMedianAndWidestSpread) {
  const DeviceMesh mesh = *DeviceMesh::Create({2, 2});
  const std::vector<Probe> probes = MakeProbes(mesh, {4096, 65536});
  std::vector<TimedCollective> samples;
  for (size_t i = 0; i < probes.size(); ++i) {
    const Probe& p = probes[i];
    // Mesh dim 1's samples take twice as long as mesh dim 0's.
    const double us = (p.bytes < 10000 ? 100 : 400) * (p.group == MeshDimSet::Single(1) ? 2 : 1);
    samples.push_back({p.kind, p.n, p.bytes, us, us / 2, us * 3});
  }
  const std::vector<MeasuredTable> tables = BuildTables(probes, samples, LinkProfile{1, 1});
  // 6 kinds x group sizes 2 and 4.
  ASSERT_EQ(tables.size(), 12u);
  const MeasuredTable& gather2 = tables[0];
  EXPECT_EQ(gather2.kind, StepKind::kAllGather);
  EXPECT_EQ(gather2.n, 2);
  EXPECT_EQ(gather2.group, "{0}+{1}");
  ASSERT_EQ(gather2.samples.size(), 2u);
  // The median of 100 and 200 (two groups) is their mean; min and max the widest.
  EXPECT_EQ(gather2.samples[0].us, 150);
  EXPECT_EQ(gather2.samples[0].min_us, 50);
  EXPECT_EQ(gather2.samples[0].max_us, 600);
  EXPECT_EQ(gather2.samples[1].us, 600);
}

TEST(MeasuredTablesTest, HeldOutSizesArePredictedWithoutTheirSample) {
  MeasuredTable t;
  t.kind = StepKind::kAllToAll;
  t.n = 4;
  t.fit = {10, 1};
  t.samples = {{1000, 100, 100, 100}, {10000, 300, 300, 300}, {100000, 900, 900, 900}};
  const std::vector<HeldOut> held = HeldOutPredictions(t);
  ASSERT_EQ(held.size(), 3u);
  EXPECT_TRUE(held[0].extrapolated);
  EXPECT_FALSE(held[1].extrapolated);
  EXPECT_TRUE(held[2].extrapolated);
  // The middle, from 100 at 1e3 and 900 at 1e5: their geometric mean, 300.
  EXPECT_NEAR(held[1].predicted_us, 300, 1e-9);
  EXPECT_EQ(held[1].measured_us, 300);
  // The largest, from 300 at 1e4 plus all_to_all's (n-1)/n of 9e4 more bytes
  // at 1000 bytes/us (spec 6.2, the table's fit).
  EXPECT_NEAR(held[2].predicted_us, 300 + 0.75 * 90000 / 1000, 1e-9);
}

}  // namespace
}  // namespace reshard
