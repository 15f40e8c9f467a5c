"""reshard as DTensor's own planner: use_reshard_planner() on 4 gloo processes (docs/torch.md).

    python3 -m pip install ./python                       # reshard in this environment
    python3 python/examples/planner_switch.py

Each process runs the same DTensor program twice, with torch's planner and
inside `use_reshard_planner()`, and checks that every result is the same and
that reshard planned the second run. Exits 1 on a mismatch.
"""

import os
import socket
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor

import reshard.torch as rt


def program(mesh, full):
    """A DTensor program: the moves a 2-D (data, tensor) parallel layer makes."""
    x = distribute_tensor(full, mesh, [Shard(0), Shard(1)])
    gathered = x.redistribute(mesh, [Replicate(), Shard(1)])  # gather the data-parallel dim
    swapped = x.redistribute(mesh, [Shard(1), Shard(0)])  # swap the roles of the mesh dims
    partial = DTensor.from_local(full, mesh, [Partial(), Partial()])  # each rank's addend
    summed = partial.redistribute(mesh, [Shard(0), Replicate()])  # reduce, then shard
    return [t.full_tensor() for t in (gathered, swapped, summed)]


def worker(rank, port, failed):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=4)
    mesh = init_device_mesh("cpu", (2, 2))
    full = torch.arange(63.0).reshape(9, 7)
    # readme: begin
    by_torch = program(mesh, full)  # DTensor.redistribute, planned by torch
    with rt.use_reshard_planner():  # the same program, planned by reshard's pytorch mode
        by_reshard = program(mesh, full)
    # readme: end
    same = all(torch.equal(a, b) for a, b in zip(by_torch, by_reshard))
    if rank == 0:
        print(f"results equal: {same}; plans by reshard: {rt.planner_stats()['planned'] > 0}",
              flush=True)
    if not same or rt.planner_stats()["planned"] == 0:
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
