"""Test workers on gloo processes, for the tests that run reshard.torch on several CPU ranks.

    gloo_processes.run(_worker, 4, out_dir)   # _worker(rank, out_dir) on ranks 0-3

Each process joins one gloo world through a FileStore in a fresh directory (no port to race
for), enables faulthandler (a rank killed by a signal prints its Python stack), calls the
worker, waits at a barrier for the others and destroys the world, so that no rank tears gloo
down while a peer still talks to it.

A process killed by a signal is reported on stderr and the processes run once more: CI saw
one rank abort in torch/gloo ("terminate called without an active exception", once in a run
of the suite; 30 runs here did not repeat it). A second death, or a Python exception in any
worker, fails the test.
"""

import faulthandler
import os
import sys
import tempfile

import torch.distributed as dist
import torch.multiprocessing as mp


def run(worker, world, *args):
    """worker(rank, *args) on `world` spawned processes of one gloo world."""
    for attempt in (1, 2):
        with tempfile.TemporaryDirectory() as store_dir:
            try:
                mp.spawn(_process, args=(world, store_dir, worker, args), nprocs=world, join=True)
                return
            except mp.ProcessExitedException as e:
                if attempt == 2 or e.signal_name is None:
                    raise
                print(f"gloo_processes: {e}; running the {world} processes once more",
                      file=sys.stderr, flush=True)


def _process(rank, world, store_dir, worker, args):
    faulthandler.enable()
    dist.init_process_group("gloo", init_method=f"file://{os.path.join(store_dir, 'store')}",
                            rank=rank, world_size=world)
    try:
        worker(rank, *args)
        dist.barrier()
    finally:
        dist.destroy_process_group()
