"""reshard.torch.redistribute_local on 4 gloo processes (CPU), compared with the full tensor.

Every case lays out an integer-valued tensor with local_shard, redistributes
it, and checks the result against local_shard of the same tensor in the
destination layout. A destination with Partial (sum) mesh dims is checked by
summing the results of the ranks that differ only on those mesh dims
(all_gather_object) against the destination with R in their place. Shapes are uneven on purpose (5, 7, 13 over 2 or 4
ranks, some shards empty); sources have shard orders and Partials; native
plans bring group steps and permutes, pytorch plans the single-dim steps.
"""

import os
import re
import sys
import tempfile
import unittest

try:
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
    import reshard.torch
    import gloo_processes
    SKIP = None
except ImportError as e:  # scripts/test reports the tests as skipped
    torch, SKIP = None, str(e)

import reshard

WORLD = 4

# (mesh, shape, src, dst, options)
CASES = [
    ([2, 2], [5, 7], "S(0)S(1)", "RR", {}),
    ([2, 2], [5, 7], "S(0)[1]S(0)[0]", "S(1)S(0)", {}),
    ([2, 2], [5, 7], "S(0)[1]S(0)[0]", "RS(1)", {"mode": "pytorch"}),
    ([2, 2], [13, 3], "S(0)[0]S(0)[1]", "S(0)[1]S(0)[0]", {}),
    ([2, 2], [5, 7], "S(0)S(1)", "S(1)S(0)", {}),
    ([2, 2], [7, 5], "S(1)S(0)", "S(0)[0]S(0)[1]", {"mode": "pytorch"}),
    ([2, 2], [5, 7], "P(sum)S(0)", "S(1)R", {}),
    ([2, 2], [5, 7], "P(sum)P(sum)", "S(0)[1]S(0)[0]", {}),
    ([2, 2], [5, 7], "P(sum)P(sum)", "RS(1)", {"mode": "pytorch"}),
    ([2, 2], [5, 3], "P(avg)R", "S(0)S(1)", {"mode": "pytorch"}),
    ([2, 2], [5, 3], "P(max)P(max)", "RR", {}),
    ([2, 2], [6, 3], "P(min)S(1)", "S(0)R", {"mode": "pytorch"}),
    ([2, 2], [5, 7], "RR", "S(1)[1]S(1)[0]", {}),
    ([4], [13, 2], "S(0)", "S(1)", {}),
    ([4], [3, 5], "P(sum)", "S(0)", {}),
    ([4], [5], "S(0)", "R", {"mode": "pytorch"}),
    ([1, 4], [6, 5], "S(1)S(0)", "RS(1)", {"mode": "pytorch", "algorithm": "greedy"}),
    # Partial destinations: checked by summing over the Partial mesh dims.
    ([2, 2], [5, 7], "S(0)R", "P(sum)S(1)", {"mode": "pytorch", "algorithm": "graph"}),
    ([2, 2], [5, 3], "RR", "RP(sum)", {}),
    ([2, 2], [5, 3], "S(1)R", "P(sum)P(sum)", {}),
    # A group all_to_all over mesh dims {0, 1} (the alpha-beta model picks it at this size).
    ([2, 2], [1025, 1023], "S(0)S(0)", "S(1)S(1)", {"devices_per_host": 1}),
]

# Group steps the default model rarely picks on 4 ranks, run as plan steps by
# the executor: (mesh, shape, state before, state after, step object). States
# follow the replay rule of §4.2 (entries append in order).
GROUP_STEPS = [
    ([2, 2], [5, 3], "S(0)[1]S(0)[0]", "RR",
     {"mesh_dim": 0, "mesh_dims": [0, 1], "src": "S(0)", "dst": "R", "collective": "all_gather"}),
    ([2, 2], [5, 3], "P(sum)P(sum)", "RR",
     {"mesh_dim": 0, "mesh_dims": [0, 1], "src": "P(sum)", "dst": "R", "collective": "all_reduce"}),
    ([2, 2], [5, 3], "P(avg)P(avg)", "RR",
     {"mesh_dim": 0, "mesh_dims": [0, 1], "src": "P(avg)", "dst": "R", "collective": "all_reduce"}),
    ([2, 2], [5, 3], "P(sum)P(sum)", "S(0)[1]S(0)[0]",
     {"mesh_dim": 0, "mesh_dims": [0, 1], "src": "P(sum)", "dst": "S(0)",
      "collective": "reduce_scatter", "order": [1, 0]}),
    ([2, 2], [5, 3], "P(max)P(max)", "S(1)S(1)",
     {"mesh_dim": 0, "mesh_dims": [0, 1], "src": "P(max)", "dst": "S(1)",
      "collective": "reduce_scatter", "order": [0, 1]}),
]



def _worker(rank, results):
    import reshard.torch as rt

    failures, collectives = [], set()
    for i, (mesh, shape, src, dst, options) in enumerate(CASES):
        full = (torch.arange(torch.Size(shape).numel()) % 11 - 5).reshape(shape).float()
        local = rt.local_shard(full, mesh=mesh, src=src, rank=rank)
        try:
            out = rt.redistribute_local(local, mesh=mesh, shape=shape, src=src, dst=dst,
                                        **options)
            out, want = _reduced(out, mesh, dst, rank), rt.local_shard(
                full, mesh=mesh, src=dst.replace("P(sum)", "R"), rank=rank)
            if out.shape != want.shape or not torch.equal(out, want):
                failures.append(f"case {i} {src}->{dst} {options}: rank {rank} got {out.tolist()}"
                                f", want {want.tolist()}")
        except Exception as e:  # reported by the parent, the other ranks may hang otherwise
            failures.append(f"case {i} {src}->{dst}: rank {rank}: {type(e).__name__}: {e}")
            break
        plan = reshard.plan(mesh=mesh, shape=shape, src=src, dst=dst, **options)
        for step in plan.steps:
            collectives.add((step.collective, len(step.mesh_dims) > 1))
    for i, (mesh, shape, before, after, fields) in enumerate(GROUP_STEPS):
        full = (torch.arange(torch.Size(shape).numel()) % 11 - 5).reshape(shape).float()
        local = rt.local_shard(full, mesh=mesh, src=before, rank=rank)
        fields = dict(fields, logical_shape=shape, cost=0.0)
        programs = rt._torch_steps.compile_steps(rt._local_mesh(tuple(mesh), None), shape,
                                                 [before, after], [reshard.Step(fields)],
                                                 local.dtype)
        out = rt._torch_steps.run(local, programs)
        want = rt.local_shard(full, mesh=mesh, src=after, rank=rank)
        if out.shape != want.shape or not torch.equal(out, want):
            failures.append(f"group step {i} {before}->{after}: rank {rank} got {out.tolist()}"
                            f", want {want.tolist()}")
    results[rank] = (failures, sorted(collectives))


def _reduced(out, mesh, dst, rank):
    """`out` summed over the ranks that differ from `rank` only on P(sum) mesh dims of dst."""
    partial = [m for m, token in enumerate(re.findall(r"S\(\d+\)(?:\[\d+\])?|R|P\(\w+\)", dst)) if token == "P(sum)"]
    if not partial:
        return out
    import reshard.torch as rt

    outs = [None] * WORLD
    dist.all_gather_object(outs, out)
    me = rt._coordinate(tuple(mesh), rank)
    total = torch.zeros_like(out)
    for r in range(WORLD):
        c = rt._coordinate(tuple(mesh), r)
        if all(c[m] == me[m] for m in range(len(mesh)) if m not in partial):
            total += outs[r]
    return total


@unittest.skipIf(SKIP, SKIP)
class TorchPlacements(unittest.TestCase):
    def test_c10d_reduce_ops_name_partials(self):
        ops = [dist.ReduceOp.SUM, dist.ReduceOp.AVG, dist.ReduceOp.MAX, dist.ReduceOp.MIN,
               dist.ReduceOp.PRODUCT]
        self.assertEqual(reshard.notation([reshard.Partial(op) for op in ops]),
                         "P(sum)P(avg)P(max)P(min)P(prod)")
        with self.assertRaises(ValueError):
            reshard.notation([reshard.Partial(dist.ReduceOp.BAND)])

    def test_cross_mesh_keys_are_refused_before_any_communication(self):
        import reshard.torch as rt
        for key, value in (("dst_mesh", [4]), ("src_ranks", [0, 1]), ("dst_ranks", [2, 3])):
            with self.assertRaises(ValueError) as e:
                rt.redistribute_local(torch.zeros(4), mesh=[2], shape=[8], src="S(0)", dst="R",
                                      **{key: value})
            self.assertIn(f"{key}: redistribute moves within one mesh", str(e.exception))


@unittest.skipIf(SKIP, SKIP)
class RedistributeOnFourGlooProcesses(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        manager = mp.Manager()
        results = manager.dict()
        gloo_processes.run(_worker, WORLD, results)
        cls.results = dict(results)

    def test_every_rank_gets_the_destination_block_of_the_full_tensor(self):
        failures = [f for rank in range(WORLD) for f in self.results[rank][0]]
        self.assertEqual(failures, [], "\n".join(failures))

    def test_cases_cover_group_steps_permutes_and_every_single_dim_collective(self):
        seen = set(tuple(c) for c in self.results[0][1])
        for kind in ("all_gather", "all_to_all", "all_reduce", "reduce_scatter", "chunk",
                     "partition"):
            self.assertIn((kind, False), seen)
        self.assertIn(("permute", True), seen)
        self.assertTrue(any(multi and kind != "permute" for kind, multi in seen), seen)


if __name__ == "__main__":
    unittest.main()
