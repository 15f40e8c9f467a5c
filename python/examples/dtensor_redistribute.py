"""DTensors in, DTensors out: reshard.torch.redistribute on 4 gloo processes (docs/torch.md).

    python3 -m pip install ./python                       # reshard in this environment
    python3 python/examples/dtensor_redistribute.py

Each process holds a [7, 5] tensor (uneven on purpose) sharded on a 2 x 2
DeviceMesh, moves it to other layouts with reshard (native and pytorch mode)
and checks every result against DTensor.redistribute. Exits 1 on a mismatch.
"""

import os
import socket
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Replicate, Shard, distribute_tensor
from torch.distributed.tensor.placement_types import _StridedShard

import reshard.torch as rt

# (reshard's destination, the same for DTensor.redistribute): a swap, a gather,
# a shard order (tensor dim 0 split by mesh dim 1 first) and back.
MOVES = [
    (([Shard(1), Shard(0)], None), [Shard(1), Shard(0)]),
    (([Replicate(), Shard(1)], None), [Replicate(), Shard(1)]),
    (([Shard(0), Shard(0)], [(0, [1, 0])]), [_StridedShard(0, split_factor=2), Shard(0)]),
]


def worker(rank, port, failed):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=4)
    # readme: begin
    mesh = init_device_mesh("cpu", (2, 2))
    full = torch.arange(35.0).reshape(7, 5)
    x = distribute_tensor(full, mesh, [Shard(0), Shard(1)])  # DTensor in
    y = rt.redistribute(x, [Shard(1), Shard(0)])  # DTensor out: native mode's plan, run on gloo
    trace = rt.plan(x, [Shard(1), Shard(0)]).trace  # the plan, without running it
    # readme: end
    if not torch.equal(y.full_tensor(), full):
        failed.value = 1
    if rank == 0:
        print(f"plan: {trace}", flush=True)
    for (placements, shard_order), torch_placements in MOVES:
        for mode in ("native", "pytorch"):
            y = rt.redistribute(x, placements, shard_order=shard_order, mode=mode)
            want = x.redistribute(mesh, torch_placements)
            ok = torch.equal(y.to_local(), want.to_local()) and torch.equal(y.full_tensor(), full)
            if rank == 0:
                steps = [s.collective for s in rt.plan(x, placements, shard_order=shard_order,
                                                       mode=mode).steps]
                print(f"{mode:8} {str(x._spec)} -> {str(y._spec)}: {steps} "
                      f"{'== DTensor.redistribute' if ok else 'DIFFERS'}", flush=True)
            if not ok:
                failed.value = 1
    dist.barrier()  # every rank done before any tears gloo down (an early exit can abort a peer)
    dist.destroy_process_group()


if __name__ == "__main__":
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        free_port = s.getsockname()[1]
    flag = mp.get_context("spawn").Value("i", 0)
    mp.spawn(worker, args=(free_port, flag), nprocs=4, join=True)
    sys.exit(flag.value)
