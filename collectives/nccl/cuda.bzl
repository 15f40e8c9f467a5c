"""if_cuda: what only --config=cuda builds (collectives/nccl/BUILD.bazel says
why a select() on //collectives/nccl:cuda keeps CUDA out of the default build)."""

def if_cuda(items, otherwise = []):
    """`items` with --config=cuda (--define reshard_cuda=1), else `otherwise`."""
    return select({
        "//collectives/nccl:cuda": items,
        "//conditions:default": otherwise,
    })
