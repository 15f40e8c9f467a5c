// Calibrate's samples as measured tables (harness/measured_tables.h): one table
// per kind and group size, groups of one size merged by the median.
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

}  // namespace
}  // namespace reshard
