#include "mesh/device_mesh.h"

#include <set>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace reshard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(DeviceMeshTest, CreateRejectsBadSizes) {
  EXPECT_THAT(DeviceMesh::Create({}).status().message(), HasSubstr("at least one dim"));
  EXPECT_THAT(DeviceMesh::Create({2, 2, 2, 2, 2, 2, 2, 2, 2}).status().message(),
              HasSubstr("9 dims, the supported maximum is 8"));
  EXPECT_THAT(DeviceMesh::Create({2, 0}).status().message(),
              HasSubstr("dim 1 has size 0; sizes must be >= 1"));
  EXPECT_THAT(DeviceMesh::Create({-3}).status().message(), HasSubstr("dim 0 has size -3"));
  // 2^12 * 2^13 = 2^25 ranks > kMaxMeshRanks = 2^24.
  absl::StatusOr<DeviceMesh> huge = DeviceMesh::Create({int64_t{1} << 12, int64_t{1} << 13});
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(huge.status().message(), HasSubstr("ranks"));
  // Exactly the maximum is fine.
  EXPECT_TRUE(DeviceMesh::Create({int64_t{1} << 12, int64_t{1} << 12}).ok());
}

TEST(DeviceMeshTest, Accessors) {
  absl::StatusOr<DeviceMesh> mesh = DeviceMesh::Create({2, 3, 4});
  ASSERT_TRUE(mesh.ok());
  EXPECT_EQ(mesh->ndim(), 3);
  EXPECT_EQ(mesh->size(1), 3);
  EXPECT_EQ(mesh->num_ranks(), 24);
  EXPECT_EQ(mesh->ToString(), "2x3x4");
  EXPECT_EQ(DeviceMesh().num_ranks(), 1);
  EXPECT_EQ(*mesh, *DeviceMesh::Create({2, 3, 4}));
  EXPECT_NE(*mesh, *DeviceMesh::Create({2, 4, 3}));
}

TEST(DeviceMeshTest, RowMajorCoordinates) {
  absl::StatusOr<DeviceMesh> mesh = DeviceMesh::Create({2, 2, 2});
  ASSERT_TRUE(mesh.ok());
  // 5 = 1*4 + 0*2 + 1 (row-major strides 4, 2, 1).
  EXPECT_THAT(mesh->Coordinate(5), ElementsAre(1, 0, 1));
  absl::StatusOr<DeviceMesh> mesh23 = DeviceMesh::Create({2, 3});
  EXPECT_THAT(mesh23->Coordinate(4), ElementsAre(1, 1));  // 4 = 1*3 + 1
}

TEST(DeviceMeshTest, RankCoordinateRoundTrip) {
  for (std::vector<int64_t> sizes :
       std::vector<std::vector<int64_t>>{{1}, {8}, {2, 3}, {3, 1, 4}, {2, 2, 2, 2}, {1, 5, 1, 3}}) {
    absl::StatusOr<DeviceMesh> mesh = DeviceMesh::Create(sizes);
    ASSERT_TRUE(mesh.ok());
    std::vector<int64_t> previous;
    for (int64_t r = 0; r < mesh->num_ranks(); ++r) {
      std::vector<int64_t> c = mesh->Coordinate(r);
      ASSERT_TRUE(mesh->ValidateCoordinate(c).ok()) << mesh->ToString() << " rank " << r;
      EXPECT_EQ(mesh->Rank(c), r);
      // Row-major: coordinates increase lexicographically with the rank.
      if (!previous.empty()) {
        EXPECT_LT(previous, c);
      }
      previous = c;
    }
  }
}

TEST(DeviceMeshTest, GroupAlong) {
  absl::StatusOr<DeviceMesh> mesh = DeviceMesh::Create({2, 3, 2});
  ASSERT_TRUE(mesh.ok());
  EXPECT_THAT(mesh->GroupAlong(1, 5), ElementsAre(1, 3, 5));  // header example shape
  for (int dim = 0; dim < mesh->ndim(); ++dim) {
    std::set<std::vector<int64_t>> groups;
    for (int64_t r = 0; r < mesh->num_ranks(); ++r) {
      std::vector<int64_t> group = mesh->GroupAlong(dim, r);
      ASSERT_EQ(static_cast<int64_t>(group.size()), mesh->size(dim));
      std::vector<int64_t> mine = mesh->Coordinate(r);
      EXPECT_EQ(group[mine[dim]], r);  // own index is own coordinate
      for (int64_t i = 0; i < mesh->size(dim); ++i) {
        std::vector<int64_t> c = mesh->Coordinate(group[i]);
        EXPECT_EQ(c[dim], i);
        for (int k = 0; k < mesh->ndim(); ++k) {
          if (k != dim) {
            EXPECT_EQ(c[k], mine[k]);
          }
        }
      }
      groups.insert(group);
    }
    // The groups along a dim partition the ranks.
    EXPECT_EQ(static_cast<int64_t>(groups.size()), mesh->num_ranks() / mesh->size(dim));
  }
}

TEST(DeviceMeshTest, GroupOfOneDimIsGroupAlong) {
  absl::StatusOr<DeviceMesh> mesh = DeviceMesh::Create({2, 3, 2});
  ASSERT_TRUE(mesh.ok());
  for (int dim = 0; dim < mesh->ndim(); ++dim) {
    for (int64_t r = 0; r < mesh->num_ranks(); ++r) {
      EXPECT_EQ(mesh->GroupOf(MeshDimSet::Single(dim), r), mesh->GroupAlong(dim, r));
      EXPECT_EQ(mesh->IndexInGroup(MeshDimSet::Single(dim), r), mesh->Coordinate(r)[dim]);
    }
  }
}

TEST(DeviceMeshTest, GroupOfDimSetIsRowMajorOverItsDims) {
  absl::StatusOr<DeviceMesh> mesh = DeviceMesh::Create({2, 2, 2});
  ASSERT_TRUE(mesh.ok());
  EXPECT_THAT(mesh->GroupOf(MeshDimSet::Of({0, 2}), 5), ElementsAre(0, 1, 4, 5));  // header
  EXPECT_EQ(mesh->IndexInGroup(MeshDimSet::Of({0, 2}), 5), 3);
  EXPECT_THAT(mesh->GroupOf(MeshDimSet(), 6), ElementsAre(6));
  EXPECT_THAT(mesh->GroupOf(MeshDimSet::Of({0, 1, 2}), 6), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
}

TEST(DeviceMeshTest, GroupsOfEveryDimSetPartitionTheRanks) {
  absl::StatusOr<DeviceMesh> mesh = DeviceMesh::Create({2, 3, 2});
  ASSERT_TRUE(mesh.ok());
  for (unsigned bits = 0; bits < 8; ++bits) {
    const MeshDimSet dims = MeshDimSet::FromBits(static_cast<uint8_t>(bits));
    std::set<std::vector<int64_t>> groups;
    for (int64_t r = 0; r < mesh->num_ranks(); ++r) {
      std::vector<int64_t> group = mesh->GroupOf(dims, r);
      ASSERT_EQ(static_cast<int64_t>(group.size()), mesh->GroupSize(dims));
      EXPECT_EQ(group[mesh->IndexInGroup(dims, r)], r);
      const std::vector<int64_t> mine = mesh->Coordinate(r);
      for (size_t i = 0; i < group.size(); ++i) {
        const std::vector<int64_t> c = mesh->Coordinate(group[i]);
        for (int k = 0; k < mesh->ndim(); ++k) {
          if (!dims.Contains(k)) {
            EXPECT_EQ(c[k], mine[k]);
          }
        }
        if (i > 0) {
          EXPECT_LT(mesh->Coordinate(group[i - 1]), c);  // row-major
        }
      }
      groups.insert(group);
    }
    EXPECT_EQ(static_cast<int64_t>(groups.size()), mesh->num_ranks() / mesh->GroupSize(dims))
        << dims.ToString();
  }
}

TEST(MeshDimSetTest, SetOperationsAndPrinting) {
  const MeshDimSet s = MeshDimSet::Of({2, 0});
  EXPECT_EQ(s.size(), 2);
  EXPECT_TRUE(s.Contains(0));
  EXPECT_FALSE(s.Contains(1));
  EXPECT_EQ(s.First(), 0);
  EXPECT_THAT(s.ToVector(), ElementsAre(0, 2));
  EXPECT_EQ(s.ToString(), "{0,2}");
  EXPECT_EQ(s, MeshDimSet::Single(0).With(2));
  EXPECT_TRUE(MeshDimSet().empty());
  EXPECT_EQ(MeshDimSet().ToString(), "{}");
}

TEST(DeviceMeshTest, ValidateCoordinate) {
  absl::StatusOr<DeviceMesh> mesh = DeviceMesh::Create({2, 3});
  ASSERT_TRUE(mesh.ok());
  EXPECT_TRUE(mesh->ValidateCoordinate({1, 2}).ok());
  EXPECT_THAT(mesh->ValidateCoordinate({1}).message(), HasSubstr("1 entries for a 2-D mesh"));
  EXPECT_THAT(mesh->ValidateCoordinate({1, 3}).message(),
              HasSubstr("entry 1 is 3, outside mesh dim 1 of size 3"));
  EXPECT_THAT(mesh->ValidateCoordinate({-1, 0}).message(), HasSubstr("entry 0 is -1"));
}

}  // namespace
}  // namespace reshard
