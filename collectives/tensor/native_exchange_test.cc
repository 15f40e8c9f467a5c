// The pieces native steps move (spec §11, native steps): every member's
// nested slice of a group (GroupSlices), what a permute sends and receives
// (PermuteExchangeOf, BytesOfStep), and the box copies and nested packing the
// executor builds from them. Expected values are derived in the comments.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

#include "collectives/tensor/box_copy.h"
#include "collectives/tensor/chunk_pack.h"
#include "collectives/tensor/local_tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mesh/device_mesh.h"
#include "planner/layout/chunk.h"
#include "planner/layout/notation.h"
#include "planner/steps/permute_exchange.h"
#include "planner/steps/slice_routes.h"
#include "planner/steps/step.h"
#include "planner/steps/step_bytes.h"
#include "tests/util/spec_helpers.h"

namespace reshard {
namespace {

using ::testing::ElementsAre;

DeviceMesh Mesh(std::vector<int64_t> sizes) { return *DeviceMesh::Create(sizes); }

// 5 over mesh dims 0 then 1 of 2x2: 3 -> 2,1 and 2 -> 1,1.
TEST(GroupSlicesTest, NestedChunksInMemberOrder) {
  const DeviceMesh mesh = Mesh({2, 2});
  const MeshDimSet group = MeshDimSet::Of({0, 1});
  EXPECT_THAT(GroupSlices(mesh, group, {0, 1}, 5),
              ElementsAre(Slice{0, 2}, Slice{2, 1}, Slice{3, 1}, Slice{4, 1}));
  // Split over mesh dim 1 first: member (c0, c1) holds nested slice (c1, c0).
  EXPECT_THAT(GroupSlices(mesh, group, {1, 0}, 5),
              ElementsAre(Slice{0, 2}, Slice{3, 1}, Slice{2, 1}, Slice{4, 1}));
  // Not split by the group: everyone holds all of it.
  EXPECT_THAT(GroupSlices(mesh, group, {}, 5),
              ElementsAre(Slice{0, 5}, Slice{0, 5}, Slice{0, 5}, Slice{0, 5}));
}

// A random group and split of one extent: a mesh of 1-4 dims of sizes 1-4,
// any subset of them as the group, any of them (in or outside the group) as
// the splits in a random order, a length of 0-29.
struct RandomGroupSplit {
  DeviceMesh mesh;
  MeshDimSet group;
  std::vector<int> splits;
  int64_t length;
};
RandomGroupSplit DrawGroupSplit(std::mt19937& rng) {
  std::vector<int64_t> sizes(1 + rng() % 4);
  for (int64_t& s : sizes) s = 1 + static_cast<int64_t>(rng() % 4);
  DeviceMesh mesh = Mesh(sizes);
  const int ndim = mesh.ndim();
  const auto group = MeshDimSet::FromBits(static_cast<uint8_t>(rng() % (1u << ndim)));
  std::vector<int> splits;
  for (int m = 0; m < ndim; ++m) {
    if (rng() % 2) splits.push_back(m);
  }
  std::shuffle(splits.begin(), splits.end(), rng);
  const int64_t length = static_cast<int64_t>(rng() % 30);
  return {std::move(mesh), group, std::move(splits), length};
}

// GroupSlices computes each distinct slice once and walks the members by an
// odometer; it must still give member j (row-major over the group's
// ascending mesh dims) NestedChunk at its coordinates on the splits (0 on a
// split outside the group), on random meshes, groups, splits and lengths.
TEST(GroupSlicesTest, EveryMemberHoldsItsNestedChunkOnRandomGroups) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 2000; ++trial) {
    const auto [mesh, group, splits, length] = DrawGroupSplit(rng);
    const int ndim = mesh.ndim();
    const std::vector<Slice> slices = GroupSlices(mesh, group, splits, length);
    const std::vector<int> dims = group.ToVector();
    ASSERT_EQ(static_cast<int64_t>(slices.size()), mesh.GroupSize(group));
    for (int64_t j = 0; j < mesh.GroupSize(group); ++j) {
      std::vector<int64_t> coord(ndim, 0);
      int64_t rest = j;
      for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
        coord[*it] = rest % mesh.size(*it);
        rest /= mesh.size(*it);
      }
      std::vector<int64_t> split_sizes, indices;
      for (int m : splits) {
        split_sizes.push_back(mesh.size(m));
        indices.push_back(coord[m]);
      }
      EXPECT_EQ(slices[j], NestedChunk(length, split_sizes, indices))
          << "trial " << trial << ", member " << j << ", group " << group.ToString();
    }
  }
}

// GroupSliceGrid (what exchange pricing routes, LoadOfGridRoutes) indexes
// GroupSlices' slices member by member, each distinct slice once, in an
// order where offsets and ends ascend (LoadOfGridRoutes' requirement), on
// random meshes, groups, splits and lengths.
TEST(GroupSlicesTest, GridIndexesEachMembersSliceInOrderOfOffset) {
  std::mt19937 rng(13);
  std::vector<Slice> table;
  std::vector<uint32_t> index;
  for (int trial = 0; trial < 2000; ++trial) {
    const auto [mesh, group, splits, length] = DrawGroupSplit(rng);
    const std::vector<Slice> slices = GroupSlices(mesh, group, splits, length);
    GroupSliceGrid(mesh, group, splits, length, &table, &index);
    ASSERT_EQ(index.size(), slices.size());
    for (size_t j = 0; j < slices.size(); ++j) {
      ASSERT_LT(index[j], table.size());
      EXPECT_EQ(table[index[j]], slices[j]) << "trial " << trial << ", member " << j;
    }
    for (size_t x = 1; x < table.size(); ++x) {
      EXPECT_LE(table[x - 1].offset, table[x].offset) << "trial " << trial;
      EXPECT_LE(table[x - 1].offset + table[x - 1].size, table[x].offset + table[x].size);
      EXPECT_TRUE(table[x].size == 0 || !(table[x] == table[x - 1])) << "trial " << trial;
    }
  }
}

TEST(GroupSlicesTest, OneMeshDimIsTorchChunk) {
  const DeviceMesh mesh = Mesh({4, 3});
  const std::vector<Slice> slices = GroupSlices(mesh, MeshDimSet::Single(0), {0}, 5);
  for (int64_t j = 0; j < 4; ++j) {
    EXPECT_EQ(slices[j], (Slice{ChunkOffset(5, 4, j), ChunkSize(5, 4, j)})) << j;
  }
}

DistState State(const DeviceMesh& mesh, const char* notation, int tensor_ndim) {
  return ParseDistState(notation, mesh, tensor_ndim)->state;
}

// S(0)[1]S(0)[0] -> S(0)S(0), 5 x 3 on 2x2: ranks 1 = (0,1) and 2 = (1,0)
// swap one row; ranks 0 and 3 keep their block and exchange nothing.
TEST(PermuteExchangeTest, PurePermutationMovesEachBlockOnce) {
  const DeviceMesh mesh = Mesh({2, 2});
  const DistState s = State(mesh, "S(0)[1]S(0)[0]", 2);
  const Step step = MakePermute({{0, 0}, {1, 0}});
  const std::vector<int64_t> L = {5, 3};
  const PermuteExchange x = PermuteExchangeOf(s, step, mesh, L, {0, 1});
  EXPECT_EQ(x.me, 1);
  EXPECT_THAT(x.SendCounts(), ElementsAre(0, 0, 3, 0));
  EXPECT_THAT(x.RecvCounts(), ElementsAre(0, 0, 3, 0));
  EXPECT_THAT(x.target_shape, ElementsAre(1, 3));
  const PermuteExchange y = PermuteExchangeOf(s, step, mesh, L, {0, 0});
  EXPECT_THAT(y.SendCounts(), ElementsAre(6, 0, 0, 0));  // its own 2 rows, a local copy
  EXPECT_EQ(BytesOfStep(s, step, L, mesh, {0, 0}, DType::kF32).sent, 0);
  EXPECT_EQ(BytesOfStep(s, step, L, mesh, {0, 1}, DType::kF32).sent, 3 * 4);
  EXPECT_EQ(BytesOfStep(s, step, L, mesh, {1, 0}, DType::kF32).received, 3 * 4);
}

// S(0)S(1) -> S(1)S(0) on 4x2, 7 x 5: every rank's sends tile its source
// block and its receives tile its target block.
TEST(PermuteExchangeTest, TransposePiecesTileBothBlocks) {
  const DeviceMesh mesh = Mesh({4, 2});
  const DistState s = State(mesh, "S(0)S(1)", 2);
  const Step step = MakePermute({{0, 1}, {1, 0}});
  for (int64_t r = 0; r < 8; ++r) {
    const std::vector<int64_t> coord = mesh.Coordinate(r);
    const PermuteExchange x = PermuteExchangeOf(s, step, mesh, {7, 5}, coord);
    const std::vector<int64_t> sent = x.SendCounts(), received = x.RecvCounts();
    EXPECT_EQ(std::accumulate(sent.begin(), sent.end(), int64_t{0}),
              ChunkSize(7, 4, coord[0]) * ChunkSize(5, 2, coord[1]))
        << r;
    EXPECT_EQ(std::accumulate(received.begin(), received.end(), int64_t{0}),
              ChunkSize(7, 2, coord[1]) * ChunkSize(5, 4, coord[0]))
        << r;
  }
}

// A permute or exchange to price at a logical shape: the tests below price
// lists of them back to back.
struct ExchangeCase {
  DeviceMesh mesh;
  DistState state;
  Step step;
  std::vector<int64_t> logical;
};

// ExchangeLoadOf reuses its blocks' storage from call to call, and keeps its
// last answer: exchanges of different group sizes and tensor ranks, each
// priced after larger and smaller ones, again right after themselves, and
// after one that differs from them only in its logical shape, its mesh, its
// state or its step, must price as the routes of freshly built blocks do.
TEST(ExchangeLoadTest, SameLoadAsFreshBlocksWhateverWasPricedBefore) {
  const DeviceMesh m42 = Mesh({4, 2}), m22 = Mesh({2, 2}), m232 = Mesh({2, 3, 2}),
                   m44 = Mesh({4, 4});
  const std::vector<ExchangeCase> cases = {
      {m42, State(m42, "S(0)S(1)", 2), MakePermute({{0, 1}, {1, 0}}), {7, 5}},
      {m22, State(m22, "S(0)[1]S(0)[0]", 2), MakePermute({{0, 0}, {1, 0}}), {5, 3}},
      {m232,
       State(m232, "S(0)RS(2)", 3),
       MakeExchange(MeshDimSet::Of({0, 1, 2}), {{0, 2}, {1, 0}}),
       {9, 7, 5}},
      {m232, State(m232, "RS(1)S(1)", 2), MakeExchange(MeshDimSet::Of({1, 2}), {{2, 0}}), {6, 11}},
      // Case 0 but for one argument each.
      {m42, State(m42, "S(0)S(1)", 2), MakePermute({{0, 1}, {1, 0}}), {7, 9}},
      {m44, State(m44, "S(0)S(1)", 2), MakePermute({{0, 1}, {1, 0}}), {7, 5}},
      {m42, State(m42, "S(0)[0]S(0)[1]", 2), MakePermute({{0, 1}, {1, 0}}), {7, 5}},
      {m42, State(m42, "S(0)S(1)", 2), MakePermute({{0, 1}}), {7, 5}},
  };
  std::optional<RouteLoad> case0;
  for (int i : {2, 0, 1, 3, 2, 2, 1, 0, 0, 3, 1, 0, 4, 0, 5, 0, 6, 0, 7, 7, 0}) {
    const ExchangeCase& c = cases[i];
    const RouteLoad want = test_util::FreshRouteLoad(c.state, c.step, c.mesh, c.logical);
    EXPECT_EQ(test_util::LoadFields(ExchangeLoadOf(c.state, c.step, c.mesh, c.logical)),
              test_util::LoadFields(want))
        << "case " << i;
    EXPECT_GT(want.total_sent, 0) << "case " << i;  // each case moves something
    if (i == 0) case0 = want;
    if (i >= 4) {  // a last answer kept for case 0 would be wrong here
      EXPECT_NE(std::make_tuple(want.max_sent, want.max_received, want.max_messages),
                std::make_tuple(case0->max_sent, case0->max_received, case0->max_messages))
          << "case " << i;
    }
  }
}

// ExchangeLoadOf keeps a few answers per thread (a search's later routings
// must not push out its plan's): more distinct exchanges than it keeps,
// priced round after round, each time as from fresh blocks.
TEST(ExchangeLoadTest, SameLoadAsFreshBlocksPastTheAnswersKept) {
  const DeviceMesh m232 = Mesh({2, 3, 2});
  const DistState state = State(m232, "RS(1)S(1)", 2);
  const Step step = MakeExchange(MeshDimSet::Of({1, 2}), {{2, 0}});
  for (int round = 0; round < 3; ++round) {
    for (int64_t rows = 6; rows < 46; ++rows) {  // 40 exchanges, one logical shape each
      const std::vector<int64_t> logical = {rows, 11};
      EXPECT_EQ(test_util::LoadFields(ExchangeLoadOf(state, step, m232, logical)),
                test_util::LoadFields(test_util::FreshRouteLoad(state, step, m232, logical)))
          << "round " << round << ", " << rows << " rows";
    }
  }
}

// ExchangeLoadBoundOf's terms (permute_exchange.h) from every member's
// blocks built afresh, box by box.
ExchangeLoadBound LoadBoundOfBlocks(const std::vector<Box>& held, const std::vector<Box>& wanted) {
  ExchangeLoadBound bound;
  int64_t holders = 0, demand = 0, demanders = 0;
  for (size_t j = 0; j < held.size(); ++j) {
    const Box& w = wanted[j];
    const int64_t kept = BoxElements(MeetBoxes(held[j], w, w));
    bound.elements = std::max(bound.elements, BoxElements(w) - kept);
    std::vector<Box> meeting;  // distinct source blocks
    for (const Box& h : held) {
      if (BoxElements(MeetBoxes(h, w, w)) > 0 &&
          std::find(meeting.begin(), meeting.end(), h) == meeting.end()) {
        meeting.push_back(h);
      }
    }
    bound.messages =
        std::max(bound.messages, static_cast<int64_t>(meeting.size()) - (kept > 0 ? 1 : 0));
    const int64_t covered = BoxElements(MeetBoxes(held[0], w, w));
    holders += held[j] == held[0];
    demand += held[j] == held[0] ? 0 : covered;
    demanders += held[j] != held[0] && covered > 0;
  }
  bound.elements = std::max(bound.elements, (demand + holders - 1) / holders);
  bound.messages = std::max(bound.messages, (demanders + holders - 1) / holders);
  return bound;
}

// ExchangeLoadBoundOf keeps each tensor dim's per-member terms per thread,
// by mesh, group, splits before and after, and length: exchanges bounded
// after ones that share all of that but one part must still bound as their
// blocks do.
TEST(ExchangeLoadTest, LoadBoundAsFreshBlocksWhateverWasBoundedBefore) {
  const DeviceMesh m42 = Mesh({4, 2}), m43 = Mesh({4, 3}), m232 = Mesh({2, 3, 2});
  const std::vector<ExchangeCase> cases = {
      {m42, State(m42, "S(0)S(1)", 2), MakePermute({{0, 1}, {1, 0}}), {7, 5}},
      {m232,
       State(m232, "S(0)RS(2)", 3),
       MakeExchange(MeshDimSet::Of({0, 1, 2}), {{0, 2}, {1, 0}}),
       {9, 7, 5}},
      {m232, State(m232, "RS(1)S(1)", 2), MakeExchange(MeshDimSet::Of({1, 2}), {{2, 0}}), {6, 11}},
      // Case 0 but for one part of a tensor dim's key each: its length,
      // the mesh, the splits before, the splits after.
      {m42, State(m42, "S(0)S(1)", 2), MakePermute({{0, 1}, {1, 0}}), {6, 5}},
      {m43, State(m43, "S(0)S(1)", 2), MakePermute({{0, 1}, {1, 0}}), {7, 5}},
      {m42, State(m42, "S(0)[1]S(0)[0]", 2), MakePermute({{0, 1}, {1, 0}}), {7, 5}},
      {m42, State(m42, "S(0)S(1)", 2), MakePermute({{1, 0}, {0, 0}}), {7, 5}},
      // Case 2 on another group: tensor dim 0's splits before and after are
      // the same mesh dims.
      {m232,
       State(m232, "RS(1)S(1)", 2),
       MakeExchange(MeshDimSet::Of({0, 1, 2}), {{2, 0}}),
       {6, 11}},
  };
  for (int i : {1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 6, 2, 7, 2, 1, 7, 4, 3}) {
    const ExchangeCase& c = cases[i];
    const ExchangeLoadBound want = LoadBoundOfBlocks(
        test_util::MemberBlocks(c.state, c.step.group, c.mesh, c.logical),
        test_util::MemberBlocks(ApplyStep(c.state, c.step), c.step.group, c.mesh, c.logical));
    const ExchangeLoadBound got = ExchangeLoadBoundOf(c.state, c.step, c.mesh, c.logical);
    EXPECT_EQ(std::make_pair(got.elements, got.messages),
              std::make_pair(want.elements, want.messages))
        << "case " << i;
    EXPECT_GT(want.elements, 0) << "case " << i;  // each case moves something
  }
}

// Rows 1..2, columns 2..4 of a [4, 6] tensor: one Copy2D of 2 rows of 3
// elements, pitch 6 elements in the source and 3 in the packed box.
TEST(BoxCopyTest, TwoDimBoxIsOneCopy) {
  absl::StatusOr<std::vector<Copy2D>> copies = BoxCopies({4, 6}, {1, 2}, {2, 3}, {0, 0}, {2, 3}, 4);
  ASSERT_TRUE(copies.ok()) << copies.status();
  ASSERT_EQ(copies->size(), 1u);
  const Copy2D& c = (*copies)[0];
  EXPECT_EQ(c.rows, 2);
  EXPECT_EQ(c.row_bytes, 12);
  EXPECT_EQ(c.src_offset, (1 * 6 + 2) * 4);
  EXPECT_EQ(c.src_pitch, 24);
  EXPECT_EQ(c.dst_pitch, 12);
  EXPECT_TRUE(BoxCopies({4, 6}, {1, 2}, {2, 3}, {0, 0}, {0, 3}, 4)->empty());
  EXPECT_FALSE(BoxCopies({4, 6}, {3, 2}, {2, 3}, {0, 0}, {2, 3}, 4).ok());  // leaves the source
}

// A 3-D box copied out and back lands where it came from.
TEST(BoxCopyTest, ThreeDimRoundTrip) {
  HostCopyEngine engine;
  LocalTensor t = *LocalTensor::Zeros(DType::kI32, {3, 4, 5});
  for (int i = 0; i < 60; ++i) t.data_as<int32_t>()[i] = i;
  LocalTensor box = *LocalTensor::Zeros(DType::kI32, {2, 2, 3});
  ASSERT_TRUE(CopyBox(engine, t.data(), t.shape(), {1, 1, 2}, box.data(), box.shape(), {0, 0, 0},
                      {2, 2, 3}, 4)
                  .ok());
  // box[i][j][k] = t[1 + i][1 + j][2 + k] = (1 + i) * 20 + (1 + j) * 5 + 2 + k.
  EXPECT_EQ(box.data_as<int32_t>()[0], 27);
  EXPECT_EQ(box.data_as<int32_t>()[11], 2 * 20 + 2 * 5 + 4);
  LocalTensor back = *LocalTensor::Zeros(DType::kI32, {3, 4, 5});
  ASSERT_TRUE(CopyBox(engine, box.data(), box.shape(), {0, 0, 0}, back.data(), back.shape(),
                      {1, 1, 2}, {2, 2, 3}, 4)
                  .ok());
  EXPECT_EQ(back.data_as<int32_t>()[1 * 20 + 2 * 5 + 3], 1 * 20 + 2 * 5 + 3);
  EXPECT_EQ(back.data_as<int32_t>()[0], 0);  // outside the box
}

// Nested slices 2,1,1,1 of 5 rows (out of torch.chunk's order) packed to 2
// rows each and unpacked back.
TEST(PackSlicesTest, NestedSlicesRoundTrip) {
  HostCopyEngine engine;
  LocalTensor t = *LocalTensor::Zeros(DType::kF32, {3, 5});
  for (int i = 0; i < 15; ++i) t.data_as<float>()[i] = static_cast<float>(i + 1);
  const std::vector<Slice> slices = {{0, 2}, {3, 1}, {2, 1}, {4, 1}};
  absl::StatusOr<LocalTensor> packed = PackSlices(engine, std::move(t), 1, slices, 2);
  ASSERT_TRUE(packed.ok()) << packed.status();
  EXPECT_THAT(packed->shape(), ElementsAre(4, 3, 2));
  // Chunk 1 is column 3 then a zero column: rows 4, 0 | 9, 0 | 14, 0.
  const float* p = packed->data_as<float>() + 6;
  EXPECT_THAT(std::vector<float>(p, p + 6), ElementsAre(4, 0, 9, 0, 14, 0));
  absl::StatusOr<LocalTensor> back = UnpackSlices(engine, *std::move(packed), 1, slices, 5);
  ASSERT_TRUE(back.ok()) << back.status();
  for (int i = 0; i < 15; ++i) EXPECT_EQ(back->data_as<float>()[i], i + 1) << i;
}

// A gather's padded chunks of dim 0 (torch.chunk of 7 rows in 4: 2, 2, 2, 1)
// unpack without a copy: the buffer is narrowed to the 7 rows, as torch's
// narrow of the padded output.
TEST(PackSlicesTest, PaddedTailOfLeadingDimUnpacksInPlace) {
  HostCopyEngine engine;
  LocalTensor packed = *LocalTensor::Zeros(DType::kF32, {4, 2, 3});
  for (int i = 0; i < 24; ++i) packed.data_as<float>()[i] = static_cast<float>(i);
  const void* buffer = packed.data();
  absl::StatusOr<LocalTensor> out = UnpackChunks(engine, std::move(packed), 0, 7);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(out->shape(), ElementsAre(7, 3));
  EXPECT_EQ(out->data(), buffer);
  for (int i = 0; i < 21; ++i) EXPECT_EQ(out->data_as<float>()[i], i) << i;
}

}  // namespace
}  // namespace reshard
