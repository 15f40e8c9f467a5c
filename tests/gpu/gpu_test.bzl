"""gpu_test: a cc_test that needs a GPU (tests/gpu/BUILD.bazel says how these
stay out of the default build and of `bazel test //...`)."""

load("//collectives/nccl:cuda.bzl", "if_cuda")

def gpu_test(name, src, deps = []):
    """A manual, gpu-tagged cc_test of `src` with gpu_test_main.cc as main().

    With --config=cuda it is compiled against the CUDA toolkit; without it,
    it is no_cuda_main.cc, which fails saying so.
    """
    native.cc_test(
        name = name,
        size = "medium",
        srcs = if_cuda([src, "gpu_test_main.cc"], otherwise = ["no_cuda_main.cc"]),
        tags = ["manual", "gpu"],
        deps = if_cuda(deps + [
            ":cuda_test_util",
            "@com_google_googletest//:gtest",
            "@local_cuda//:cudart",
        ]),
    )
