#include "planner/layout/dist_spec.h"

#include <cstdint>
#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "planner/layout/chunk.h"
#include "planner/layout/dtype.h"

namespace reshard {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

DeviceMesh Mesh(std::vector<int64_t> sizes) { return *DeviceMesh::Create(std::move(sizes)); }
Placement S(int d) { return Placement::Shard(d); }

std::string CreateError(DeviceMesh mesh, DistState state, std::vector<int64_t> shape,
                        DType dtype = DType::kF32) {
  absl::StatusOr<DistSpec> spec = DistSpec::Create(std::move(mesh), state, std::move(shape), dtype);
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(spec.status().message());
}

TEST(DTypeTest, NamesAndSizes) {
  // Spec §1 item sizes.
  const std::vector<std::pair<DType, int>> sizes = {
      {DType::kF64, 8},  {DType::kI64, 8}, {DType::kF32, 4}, {DType::kI32, 4}, {DType::kF16, 2},
      {DType::kBF16, 2}, {DType::kI16, 2}, {DType::kI8, 1},  {DType::kU8, 1},  {DType::kBool, 1}};
  for (const auto& [dtype, size] : sizes) {
    EXPECT_EQ(ItemSize(dtype), size) << DTypeName(dtype);
    absl::StatusOr<DType> parsed = ParseDType(DTypeName(dtype));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, dtype);
  }
  EXPECT_EQ(DTypeName(DType::kBF16), "bf16");
  EXPECT_EQ(*ParseDType("float32"), DType::kF32);
  EXPECT_EQ(*ParseDType("bfloat16"), DType::kBF16);
  EXPECT_EQ(*ParseDType("int64"), DType::kI64);
  EXPECT_EQ(*ParseDType("uint8"), DType::kU8);
  EXPECT_EQ(*ParseDType("torch.float16"), DType::kF16);
  EXPECT_EQ(*ParseDType("double"), DType::kF64);
}

TEST(DTypeTest, UnknownNameListsAccepted) {
  absl::StatusOr<DType> bad = ParseDType("float8");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(),
              AllOf(HasSubstr("unknown \"float8\""), HasSubstr("f32 (float32"), HasSubstr("bf16"),
                    HasSubstr("bool")));
  EXPECT_FALSE(ParseDType("").ok());
  EXPECT_FALSE(ParseDType("F32").ok());
}

TEST(DistSpecTest, CreateKeepsEverything) {
  DistState state = DistState::WithDefaultOrder({S(1), Placement::Partial()});
  absl::StatusOr<DistSpec> spec = DistSpec::Create(Mesh({2, 4}), state, {6, 5}, DType::kBF16);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->mesh(), Mesh({2, 4}));
  EXPECT_EQ(spec->state(), state);
  EXPECT_THAT(spec->global_shape(), ElementsAre(6, 5));
  EXPECT_EQ(spec->tensor_ndim(), 2);
  EXPECT_EQ(spec->dtype(), DType::kBF16);
  EXPECT_FALSE(spec->strided_input());
  // 5 over 2 ranks: 3, 2.
  EXPECT_THAT(spec->LocalShape({1, 3}), ElementsAre(6, 2));
}

TEST(DistSpecTest, ShapeErrors) {
  DeviceMesh mesh = Mesh({2});
  DistState r(1);
  EXPECT_THAT(CreateError(mesh, r, {}), HasSubstr("shape: needs at least one dim"));
  EXPECT_THAT(CreateError(mesh, r, std::vector<int64_t>(9, 2)),
              HasSubstr("shape: 9 dims, the supported maximum is 8"));
  EXPECT_TRUE(DistSpec::Create(mesh, r, std::vector<int64_t>(8, 2), DType::kF32).ok());
  EXPECT_THAT(CreateError(mesh, r, {4, 4, 0}),
              HasSubstr("shape: dim 2 has size 0; sizes must be >= 1"));
  EXPECT_THAT(CreateError(mesh, r, {-5}), HasSubstr("shape: dim 0 has size -5"));
}

TEST(DistSpecTest, ByteLimit) {
  DeviceMesh mesh = Mesh({2});
  DistState r(1);
  // 2^30 * 2^28 elements of 4 bytes = 2^60 bytes.
  EXPECT_THAT(CreateError(mesh, r, {int64_t{1} << 30, int64_t{1} << 28}),
              HasSubstr("shape: 2^60 bytes exceeds the supported maximum of 2^53 bytes"));
  // Exactly 2^53 bytes is allowed; one element more is not.
  EXPECT_TRUE(DistSpec::Create(mesh, r, {int64_t{1} << 50}, DType::kF64).ok());
  EXPECT_THAT(CreateError(mesh, r, {(int64_t{1} << 50) + 1}, DType::kF64), HasSubstr("exceeds"));
  // Products far beyond int64 must not overflow into a "valid" size.
  const int64_t big = std::numeric_limits<int64_t>::max();
  EXPECT_THAT(CreateError(mesh, r, {big, big, big, big}), HasSubstr("exceeds"));
  EXPECT_THAT(CreateError(mesh, r, {3, int64_t{1} << 52}), HasSubstr("2^55.6 bytes"));
  // 2^62 * 4 wraps to 0 in int64 arithmetic; it must still be rejected.
  EXPECT_THAT(CreateError(mesh, r, {int64_t{1} << 62}), HasSubstr("2^64 bytes"));
}

TEST(DistSpecTest, StateErrors) {
  EXPECT_THAT(CreateError(Mesh({2, 2}), DistState(3), {4}),
              HasSubstr("has 3 mesh dims but the mesh (2x2) has 2"));
  EXPECT_THAT(CreateError(Mesh({2, 2}), DistState::WithDefaultOrder({Placement::Replicate(), S(2)}),
                          {4, 4}),
              HasSubstr("mesh dim 1 holds S(2) but the tensor has 2 dims"));
  EXPECT_THAT(CreateError(Mesh({2, 2}),
                          DistState::WithDefaultOrder({Placement::Partial(ReduceOp::kMax),
                                                       Placement::Partial(ReduceOp::kSum)}),
                          {4}),
              HasSubstr("mixes Partial ops sum and max"));
  EXPECT_TRUE(DistSpec::Create(Mesh({2, 2}),
                               DistState::WithDefaultOrder({Placement::Partial(ReduceOp::kAvg),
                                                            Placement::Partial(ReduceOp::kSum)}),
                               {4}, DType::kF32)
                  .ok());
}

TEST(DistSpecTest, Parse) {
  absl::StatusOr<DistSpec> spec =
      DistSpec::Parse(Mesh({2, 3}), "S(0)[1]S(0)[0]", {13, 2}, DType::kF32);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_THAT(spec->state().OrderOf(0), ElementsAre(1, 0));
  EXPECT_FALSE(spec->strided_input());
  EXPECT_THAT(spec->LocalShape({1, 2}),
              ElementsAre(LocalShape(spec->mesh(), spec->state(), {13, 2}, {1, 2})[0], 2));

  absl::StatusOr<DistSpec> strided =
      DistSpec::Parse(Mesh({2, 3}), "_S(0, 3)S(0)", {13, 2}, DType::kF32);
  ASSERT_TRUE(strided.ok()) << strided.status();
  EXPECT_TRUE(strided->strided_input());
  EXPECT_EQ(strided->state(), spec->state());
}

TEST(DistSpecTest, ParseErrors) {
  // Notation errors pass through.
  EXPECT_THAT(DistSpec::Parse(Mesh({2}), "S(1)", {4}, DType::kF32).status().message(),
              HasSubstr("tensor dim 1 is out of range"));
  // The shape is checked before the notation.
  EXPECT_THAT(DistSpec::Parse(Mesh({2}), "S(0)", std::vector<int64_t>(9, 1), DType::kF32)
                  .status()
                  .message(),
              HasSubstr("shape: 9 dims"));
  EXPECT_THAT(DistSpec::Parse(Mesh({2}), "R", {0}, DType::kF32).status().message(),
              HasSubstr("shape: dim 0 has size 0"));
}

}  // namespace
}  // namespace reshard
