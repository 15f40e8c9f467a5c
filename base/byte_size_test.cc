#include "base/byte_size.h"

#include "gtest/gtest.h"

namespace reshard {
namespace {

// Issue 44: --max-memory 1 was shown as "9.31e-10 GiB".
TEST(ShownBytesTest, SmallCountsAreBytesAndLargeOnesBinaryUnits) {
  EXPECT_EQ(ShownBytes(1), "1 byte");
  EXPECT_EQ(ShownBytes(1000), "1000 bytes");
  EXPECT_EQ(ShownBytes(1536), "1.5 KiB");
  EXPECT_EQ(ShownBytes(1 << 30), "1 GiB");
  EXPECT_EQ(ShownBytes(4e9), "3.73 GiB");
  EXPECT_EQ(ShownBytes(1023.9 * 1024), "1 MiB");  // not "1.02e+03 KiB"
  EXPECT_EQ(ShownBytes(9.2e18), "7.98 EiB");
}

}  // namespace
}  // namespace reshard
