// main() of the tests that run the `reshard` binary: argv[1] is its path
// ($(rootpath //cli:reshard)).
#include <cstdio>

#include "cli/reshard_test_util.h"
#include "gtest/gtest.h"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <path to reshard>\n", argv[0]);
    return 2;
  }
  reshard::cli_test::SetReshardBinary(argv[1]);
  return RUN_ALL_TESTS();
}
