#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/container/flat_hash_map.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include <boost/heap/d_ary_heap.hpp>
TEST(Smoke, Works) {
  absl::StatusOr<int> s = absl::InvalidArgumentError("x");
  absl::flat_hash_map<int,int> m; m[1]=2;
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(absl::StrFormat("%d", m[1]), "2");
  EXPECT_EQ(nlohmann::json::parse("[1]")[0], 1);
}
