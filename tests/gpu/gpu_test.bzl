"""gpu_test: a cc_test that needs a GPU (tests/gpu/BUILD.bazel says how these
stay out of the default build and of `bazel test //...`)."""

def gpu_test(name, src, deps = []):
    """A manual, gpu-tagged cc_test of `src` with gpu_test_main.cc as main().

    With --config=cuda it is compiled against the CUDA toolkit; without it,
    it is no_cuda_main.cc, which fails saying so.
    """
    native.cc_test(
        name = name,
        size = "medium",
        srcs = select({
            "//collectives/nccl:cuda": [src, "gpu_test_main.cc"],
            "//conditions:default": ["no_cuda_main.cc"],
        }),
        tags = ["manual", "gpu"],
        deps = select({
            "//collectives/nccl:cuda": deps + [
                ":cuda_test_util",
                "@com_google_googletest//:gtest",
                "@local_cuda//:cudart",
            ],
            "//conditions:default": [],
        }),
    )
