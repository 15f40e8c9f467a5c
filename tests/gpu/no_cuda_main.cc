// main() of the GPU tests in a build without --config=cuda: there is nothing
// to test, and saying "passed" would be a lie, so it fails and says why.
#include <cstdio>

int main() {
  std::fprintf(stderr,
               "FAILED: built without --config=cuda, so this GPU test has no code. Run "
               "scripts/gpu-test (bazel test --config=cuda on a GPU machine).\n");
  return 1;
}
