#include "planner/layout/notation.h"

#include <algorithm>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace reshard {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

DeviceMesh Mesh(std::vector<int64_t> sizes) { return *DeviceMesh::Create(std::move(sizes)); }
DeviceMesh Mesh2(int ndim) { return Mesh(std::vector<int64_t>(ndim, 2)); }

DistState Parse(absl::string_view text, const DeviceMesh& mesh, int tensor_ndim) {
  absl::StatusOr<ParsedState> p = ParseDistState(text, mesh, tensor_ndim);
  EXPECT_TRUE(p.ok()) << text << ": " << p.status();
  return p.ok() ? p->state : DistState(mesh.ndim());
}

// The parse error for `text`, which must be InvalidArgument.
std::string Error(absl::string_view text, const DeviceMesh& mesh, int tensor_ndim) {
  absl::StatusOr<ParsedState> p = ParseDistState(text, mesh, tensor_ndim);
  EXPECT_FALSE(p.ok()) << text << " parsed as " << (p.ok() ? p->state.ToString() : "");
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument) << text;
  return std::string(p.status().message());
}

TEST(NotationTest, Tokens) {
  DistState s = Parse("S(0)RP(max)", Mesh2(3), 2);
  EXPECT_THAT(s.placements(), ElementsAre(Placement::Shard(0), Placement::Replicate(),
                                          Placement::Partial(ReduceOp::kMax)));
  // P alone is P(sum); negative dims count from the end; separators and
  // spaces inside parentheses are allowed.
  EXPECT_EQ(Parse("P, S(-1)  S( -2 )", Mesh2(3), 2).ToString(), "P(sum)S(1)S(0)");
  EXPECT_EQ(Parse(" P(avg) ,R ", Mesh2(2), 1).ToString(), "P(avg)R");
  EXPECT_EQ(Parse("_S( 0 ,1 )R", Mesh2(2), 1).ToString(), "S(0)R");
  for (int i = 0; i < kNumReduceOps; ++i) {
    ReduceOp op = static_cast<ReduceOp>(i);
    std::string text = "P(" + std::string(ReduceOpName(op)) + ")";
    EXPECT_EQ(Parse(text, Mesh2(1), 1).placement(0), Placement::Partial(op));
  }
}

TEST(NotationTest, ShardOrderIndices) {
  DistState s = Parse("S(0)[1]S(0)[0]S(0)[2]", Mesh2(3), 1);
  EXPECT_THAT(s.OrderOf(0), ElementsAre(1, 0, 2));
  EXPECT_EQ(s.ToString(), "S(0)[1]S(0)[0]S(0)[2]");
  DistState t = Parse("P(sum)S(1)[1]S(1)[0]R", Mesh2(4), 2);
  EXPECT_THAT(t.OrderOf(1), ElementsAre(2, 1));
  // No indices: default (ascending) order.
  EXPECT_THAT(Parse("S(0)S(0)S(0)", Mesh2(3), 1).OrderOf(0), ElementsAre(0, 1, 2));
  // Each tensor dim decides on its own.
  DistState mixed = Parse("S(0)[1]S(1)S(0)[0]S(1)", Mesh2(4), 2);
  EXPECT_THAT(mixed.OrderOf(0), ElementsAre(2, 0));
  EXPECT_THAT(mixed.OrderOf(1), ElementsAre(1, 3));
  // [0] on a tensor dim sharded once is what nobody prints, but it is right.
  EXPECT_EQ(Parse("S(0)[0]R", Mesh2(2), 1).ToString(), "S(0)R");
}

// Golden data from the oracle's parse_state (scripts/gen_notation_golden.py).
TEST(NotationTest, MatchesOracle) {
  std::ifstream in("tests/testdata/notation_golden.txt");
  ASSERT_TRUE(in.good()) << "missing tests/testdata/notation_golden.txt";
  std::string line;
  int cases = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> f = absl::StrSplit(line, '\t');
    ASSERT_EQ(f.size(), 4u) << line;
    DistState s = Parse(f[2], Mesh2(std::stoi(f[0])), std::stoi(f[1]));
    EXPECT_EQ(s.ToString(), f[3]) << "input: " << f[2];
    ++cases;
  }
  EXPECT_EQ(cases, 400);
}

// A random valid state: random placements, shuffled orders, compatible ops.
DistState RandomState(std::mt19937& rng, int mesh_ndim, int tensor_ndim) {
  std::vector<Placement> placements;
  const ReduceOp ops[] = {ReduceOp::kSum, ReduceOp::kAvg, ReduceOp::kMax, ReduceOp::kMin,
                          ReduceOp::kProd};
  ReduceOp partial_op = ops[rng() % 5];
  for (int m = 0; m < mesh_ndim; ++m) {
    switch (rng() % 4) {
      case 0:
        placements.push_back(Placement::Replicate());
        break;
      case 1: {
        // sum and avg may mix; others stay single.
        ReduceOp op = partial_op;
        if (op == ReduceOp::kSum && rng() % 2) op = ReduceOp::kAvg;
        placements.push_back(Placement::Partial(op));
        break;
      }
      default:
        placements.push_back(Placement::Shard(rng() % tensor_ndim));
    }
  }
  ShardOrder order = DistState::WithDefaultOrder(placements).shard_order();
  for (ShardOrderEntry& e : order) std::shuffle(e.mesh_dims.begin(), e.mesh_dims.end(), rng);
  absl::StatusOr<DistState> s = DistState::Create(placements, order);
  EXPECT_TRUE(s.ok()) << s.status();
  return *s;
}

TEST(NotationTest, ToStringRoundTrips) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 2000; ++trial) {
    const int mesh_ndim = 1 + rng() % kMaxMeshDims;
    const int tensor_ndim = 1 + rng() % kMaxTensorDims;
    DistState s = RandomState(rng, mesh_ndim, tensor_ndim);
    absl::StatusOr<ParsedState> p = ParseDistState(s.ToString(), Mesh2(mesh_ndim), tensor_ndim);
    ASSERT_TRUE(p.ok()) << s.ToString() << ": " << p.status();
    EXPECT_EQ(p->state, s) << s.ToString() << " parsed as " << p->state.ToString();
    EXPECT_FALSE(p->strided);
  }
}

// Spec §7's example, both ways.
TEST(StridedShardTest, SpecExample) {
  DeviceMesh mesh = Mesh({4, 3, 2});
  absl::StatusOr<ParsedState> p = ParseDistState("_S(0, 2)_S(0, 2)S(0)", mesh, 1);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->strided);
  EXPECT_THAT(p->state.OrderOf(0), ElementsAre(2, 0, 1));
  EXPECT_EQ(p->state.ToString(), "S(0)[1]S(0)[2]S(0)[0]");
  EXPECT_EQ(FormatStrided(p->state, mesh), "_S(0, 2)_S(0, 2)S(0)");
}

TEST(StridedShardTest, DecodeExamples) {
  // Mesh (2, 3): mesh dim 1 splits first, so mesh dim 0 sees 3 splits already.
  absl::StatusOr<ParsedState> p = ParseDistState("_S(0, 3)S(0)", Mesh({2, 3}), 1);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_THAT(p->state.OrderOf(0), ElementsAre(1, 0));
  // Mesh (2, 2, 2), reversed order: split factors 4, 2, 1.
  p = ParseDistState("_S(0, 4)_S(0, 2)S(0)", Mesh2(3), 1);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->state.ToString(), "S(0)[2]S(0)[1]S(0)[0]");
  // Order [0, 2, 1]: mesh dim 1 comes after mesh dim 2 (sf 2), mesh dim 0 first.
  p = ParseDistState("S(0)_S(0, 2)S(0)", Mesh2(3), 1);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_THAT(p->state.OrderOf(0), ElementsAre(0, 2, 1));
  // Plain shards and sf 1 give the default order but still count as strided input.
  p = ParseDistState("_S(0, 1)S(0)", Mesh2(2), 1);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->strided);
  EXPECT_TRUE(p->state.HasDefaultOrder());
  // Two tensor dims decode independently; negative dims are normalised.
  p = ParseDistState("_S(-1, 2)S(0)S(1)", Mesh2(3), 2);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_THAT(p->state.OrderOf(1), ElementsAre(2, 0));
  EXPECT_THAT(p->state.OrderOf(0), ElementsAre(1));
}

TEST(StridedShardTest, EncodeExamples) {
  DeviceMesh mesh = Mesh({2, 3});
  EXPECT_EQ(FormatStrided(Parse("S(0)[1]S(0)[0]", mesh, 1), mesh), "_S(0, 3)S(0)");
  EXPECT_EQ(FormatStrided(Parse("S(0)S(0)", mesh, 1), mesh), "S(0)S(0)");
  EXPECT_EQ(FormatStrided(Parse("P(avg)S(1)", mesh, 2), mesh), "P(avg)S(1)");
}

// decode(encode(x)) == x. Exact only on meshes without size-1 dims: a size-1
// dim leaves the split-factor prefix product unchanged, so several orders
// encode alike (the data layout is then the same anyway).
TEST(StridedShardTest, EncodeDecodeRoundTrips) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 2000; ++trial) {
    const int mesh_ndim = 1 + rng() % 5;
    const int tensor_ndim = 1 + rng() % 3;
    std::vector<int64_t> sizes;
    for (int m = 0; m < mesh_ndim; ++m) sizes.push_back(2 + rng() % 3);
    DeviceMesh mesh = Mesh(sizes);
    DistState s = RandomState(rng, mesh_ndim, tensor_ndim);
    std::string text = FormatStrided(s, mesh);
    absl::StatusOr<ParsedState> p = ParseDistState(text, mesh, tensor_ndim);
    ASSERT_TRUE(p.ok()) << text << ": " << p.status();
    EXPECT_EQ(p->state, s) << text << " decoded as " << p->state.ToString() << ", want "
                           << s.ToString();
    EXPECT_EQ(p->strided, text.find("_S") != std::string::npos);
    // Only non-default orders need a split factor.
    EXPECT_EQ(s.HasDefaultOrder(), text.find("_S") == std::string::npos) << text;
  }
}

TEST(StridedShardTest, SizeOneMeshDimsKeepPlacements) {
  std::mt19937 rng(9);
  for (int trial = 0; trial < 500; ++trial) {
    const int mesh_ndim = 1 + rng() % 4;
    std::vector<int64_t> sizes;
    for (int m = 0; m < mesh_ndim; ++m) sizes.push_back(1 + rng() % 2);
    DeviceMesh mesh = Mesh(sizes);
    DistState s = RandomState(rng, mesh_ndim, 2);
    absl::StatusOr<ParsedState> p = ParseDistState(FormatStrided(s, mesh), mesh, 2);
    ASSERT_TRUE(p.ok()) << FormatStrided(s, mesh) << ": " << p.status();
    EXPECT_EQ(p->state.placements(), s.placements());
  }
}

TEST(NotationErrorTest, MessageFormat) {
  EXPECT_EQ(Error("S(0)X", Mesh2(2), 1),
            "state \"S(0)X\": token 2 (\"X\" at offset 4): unknown token; expected one of S(d), "
            "R, P(op), P or _S(d, sf)");
}

TEST(NotationErrorTest, EmptyText) {
  EXPECT_THAT(Error("", Mesh2(2), 1),
              AllOf(HasSubstr("empty"), HasSubstr("one token per mesh dim")));
  EXPECT_THAT(Error("  \t", Mesh2(2), 1), HasSubstr("empty"));
}

TEST(NotationErrorTest, UnknownOrMalformedToken) {
  EXPECT_THAT(Error("S(0)Q(1)", Mesh2(2), 1),
              AllOf(HasSubstr("token 2"), HasSubstr("\"Q(1)\""), HasSubstr("unknown token")));
  EXPECT_THAT(Error(",S(0)R", Mesh2(2), 1), HasSubstr("token 1"));
  EXPECT_THAT(Error("S(x)R", Mesh2(2), 1),
              AllOf(HasSubstr("\"S(x)\""), HasSubstr("expected S(d)")));
  EXPECT_THAT(Error("S(0", Mesh2(1), 1), HasSubstr("malformed Shard"));
  EXPECT_THAT(Error("S0", Mesh2(1), 1), HasSubstr("malformed Shard"));
  EXPECT_THAT(Error("_S(0)S(0)", Mesh2(2), 1),
              AllOf(HasSubstr("token 1"), HasSubstr("expected _S(d, sf)")));
  EXPECT_THAT(Error("_S(0, 0)S(0)", Mesh2(2), 1), HasSubstr("split factor must be >= 1"));
  EXPECT_THAT(Error("P(sum", Mesh2(1), 1), HasSubstr("expected P(op)"));
  EXPECT_THAT(Error("S(0)[", Mesh2(1), 1), HasSubstr("expected [k]"));
  EXPECT_THAT(Error("S(0)[-1]", Mesh2(1), 1), HasSubstr("expected [k] with k >= 0"));
  EXPECT_THAT(Error("S(0)R[0]", Mesh2(2), 1),
              AllOf(HasSubstr("token 2 (\"R[0]\""), HasSubstr("may only follow S(d)")));
  EXPECT_THAT(Error("S(0),,R", Mesh2(2), 1), HasSubstr("stray ','"));
  EXPECT_THAT(Error("S(0)R,", Mesh2(2), 1), HasSubstr("stray ','"));
  EXPECT_THAT(Error("S(99999999999)", Mesh2(1), 1), HasSubstr("malformed Shard"));
}

TEST(NotationErrorTest, TokenCountDiffersFromMesh) {
  EXPECT_THAT(Error("S(0)RR", Mesh2(2), 1), HasSubstr("3 tokens for a 2-D mesh"));
  EXPECT_THAT(Error("R", Mesh2(3), 1), HasSubstr("1 tokens for a 3-D mesh"));
}

TEST(NotationErrorTest, ShardDimOutOfRange) {
  EXPECT_THAT(Error("RS(2)", Mesh2(2), 2),
              AllOf(HasSubstr("token 2 (\"S(2)\""),
                    HasSubstr("tensor dim 2 is out of range for a 2-D tensor")));
  EXPECT_THAT(Error("S(-3)R", Mesh2(2), 2), HasSubstr("tensor dim -3 is out of range"));
  EXPECT_THAT(Error("_S(5, 2)R", Mesh2(2), 2), HasSubstr("tensor dim 5 is out of range"));
  EXPECT_THAT(Error("S(0)", Mesh2(1), 0), HasSubstr("a 0-D tensor cannot be sharded"));
}

TEST(NotationErrorTest, TensorRankTooLarge) {
  EXPECT_THAT(Error("R", Mesh2(1), 9),
              AllOf(HasSubstr("9 dims"), HasSubstr("the supported maximum is 8")));
  EXPECT_FALSE(ParseDistState("R", Mesh2(1), -1).ok());
  EXPECT_TRUE(ParseDistState("S(7)", Mesh2(1), 8).ok());
}

TEST(NotationErrorTest, UnknownReduceOp) {
  EXPECT_THAT(Error("RP(mean)", Mesh2(2), 1),
              AllOf(HasSubstr("token 2 (\"P(mean)\""), HasSubstr("unknown reduce op \"mean\""),
                    HasSubstr("sum, avg, max, min, prod")));
  EXPECT_THAT(Error("P()", Mesh2(1), 1), HasSubstr("unknown reduce op \"\""));
}

TEST(NotationErrorTest, MixedPartialOps) {
  EXPECT_TRUE(ParseDistState("P(sum)P(avg)", Mesh2(2), 1).ok());
  EXPECT_TRUE(ParseDistState("P(avg)P", Mesh2(2), 1).ok());
  EXPECT_TRUE(ParseDistState("P(max)P(max)", Mesh2(2), 1).ok());
  EXPECT_THAT(Error("P(sum)P(max)", Mesh2(2), 1),
              AllOf(HasSubstr("token 2 (\"P(max)\""), HasSubstr("only sum and avg may be mixed")));
  EXPECT_THAT(Error("P(sum)P(avg)RP(min)", Mesh2(4), 1), HasSubstr("token 4"));
  EXPECT_THAT(Error("P(prod)P(avg)", Mesh2(2), 1), HasSubstr("cannot be mixed with P(prod)"));
}

TEST(NotationErrorTest, IndicesOnSomeTokensOnly) {
  EXPECT_THAT(
      Error("S(0)[1]S(0)", Mesh2(2), 1),
      AllOf(HasSubstr("token 2 (\"S(0)\""), HasSubstr("give [k] on every S(0) token or on none")));
  EXPECT_THAT(Error("S(0)S(1)[0]S(0)[1]S(1)", Mesh2(4), 2), HasSubstr("token 1 (\"S(0)\""));
}

TEST(NotationErrorTest, IndicesNotAPermutation) {
  EXPECT_THAT(Error("S(0)[0]S(0)[0]", Mesh2(2), 1),
              AllOf(HasSubstr("token 2"), HasSubstr("order index 0 repeats"),
                    HasSubstr("permutation of 0..1")));
  EXPECT_THAT(Error("S(0)[0]S(0)[2]", Mesh2(2), 1),
              AllOf(HasSubstr("token 2 (\"S(0)[2]\""), HasSubstr("order index 2 is out of range")));
  EXPECT_THAT(Error("S(0)[1]S(0)[2]S(0)[3]", Mesh2(3), 1), HasSubstr("permutation of 0..2"));
  EXPECT_THAT(Error("S(0)[9999999999]S(0)[0]", Mesh2(2), 1), HasSubstr("out of range"));
}

TEST(NotationErrorTest, IndexOnSingleShard) {
  EXPECT_THAT(Error("S(0)[1]R", Mesh2(2), 1),
              AllOf(HasSubstr("token 1 (\"S(0)[1]\""), HasSubstr("only valid order index is [0]")));
}

TEST(NotationErrorTest, IndexWithStridedShard) {
  EXPECT_THAT(Error("_S(0, 2)[0]S(0)", Mesh2(2), 1),
              AllOf(HasSubstr("token 1"), HasSubstr("cannot follow _S(d, sf)")));
  EXPECT_THAT(Error("S(1)[0]_S(0, 2)S(0)", Mesh2(3), 2),
              AllOf(HasSubstr("token 1 (\"S(1)[0]\""), HasSubstr("cannot be combined with _S"),
                    HasSubstr("token 2")));
}

TEST(NotationErrorTest, UndecodableStridedShard) {
  // Mesh dim 1 (size 2) is the only split to the right: possible factors 1, 2.
  EXPECT_THAT(Error("_S(0, 3)S(0)", Mesh2(2), 1),
              AllOf(HasSubstr("token 1 (\"_S(0, 3)\""), HasSubstr("cannot decode"),
                    HasSubstr("possible split factors: 1, 2")));
  // A strided shard with nothing to its right.
  EXPECT_THAT(Error("R_S(0, 2)", Mesh2(2), 1), HasSubstr("possible split factors: 1)"));
}

}  // namespace
}  // namespace reshard
