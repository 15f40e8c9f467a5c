#include "base/status_macros.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"

namespace reshard {
namespace {

absl::StatusOr<std::unique_ptr<int>> MakeInt(bool ok, int value) {
  if (!ok) return absl::NotFoundError("no int");
  return std::make_unique<int>(value);
}

absl::Status AddInto(bool ok, int* sum) {
  RESHARD_ASSIGN_OR_RETURN(std::unique_ptr<int> v, MakeInt(ok, 5));  // move-only value
  *sum += *v;
  return absl::OkStatus();
}

absl::Status CountCalls(int* calls, absl::Status s) {
  ++*calls;
  return s;
}

absl::Status Twice(int* calls, absl::Status first) {
  RESHARD_RETURN_IF_ERROR(CountCalls(calls, first));
  RESHARD_RETURN_IF_ERROR(CountCalls(calls, absl::OkStatus()));
  return absl::OkStatus();
}

TEST(StatusMacrosTest, AssignOrReturnMovesTheValueOut) {
  int sum = 0;
  EXPECT_TRUE(AddInto(true, &sum).ok());
  EXPECT_EQ(sum, 5);
}

TEST(StatusMacrosTest, AssignOrReturnReturnsTheError) {
  int sum = 0;
  absl::Status s = AddInto(false, &sum);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "no int");
  EXPECT_EQ(sum, 0);
}

TEST(StatusMacrosTest, ReturnIfErrorStopsAtTheFirstErrorAndEvaluatesOnce) {
  int calls = 0;
  EXPECT_EQ(Twice(&calls, absl::InternalError("x")).code(), absl::StatusCode::kInternal);
  EXPECT_EQ(calls, 1);
  calls = 0;
  EXPECT_TRUE(Twice(&calls, absl::OkStatus()).ok());
  EXPECT_EQ(calls, 2);
}

}  // namespace
}  // namespace reshard
