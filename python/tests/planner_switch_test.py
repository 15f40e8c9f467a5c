"""reshard.torch.use_reshard_planner(): DTensor programs give the same results with it.

Four gloo CPU processes run the same DTensor program (random redistributions
on a 2x2 DeviceMesh: uneven shapes, Shard / Replicate / Partial(sum, avg)
sources, greedy and graph plans) without the switch and then with it; every
local result must be equal bit for bit (the plans are the same, so the
collectives are), and the switched run's plans must be reshard's (stats()).
A torch whose internals differ is refused; redistribute_cost prices
reshard's plan at reshard's cost.
"""

import random
import tempfile
import unittest

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import reshard.torch as rt

CASES = 60


def _program(rank, seed):
    from torch.distributed.device_mesh import DeviceMesh
    from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor
    from torch.distributed.tensor._redistribute import use_min_cost_redistribution_plan
    mesh = DeviceMesh("cpu", torch.arange(4).reshape(2, 2))
    rng = random.Random(seed)
    out = []
    for _ in range(CASES):
        shape = [rng.choice([1, 3, 5, 8]) for _ in range(rng.randint(1, 3))]
        op = rng.choice(["sum", "avg"])

        def draw(partial):
            return [rng.choice([Shard(rng.randrange(len(shape))), Replicate()] +
                               ([Partial(op)] if partial else [])) for _ in range(2)]

        src, dst = draw(True), draw(False)  # explicit redistribute refuses Partial targets
        graph = rng.random() < 0.5
        full = torch.arange(torch.Size(shape).numel(), dtype=torch.float64).reshape(shape)
        try:
            with use_min_cost_redistribution_plan(graph):
                # A Partial source: every rank's block of the Shard dims, as a Partial's share.
                blocks = [Replicate() if p.is_partial() else p for p in src]
                local = distribute_tensor(full, mesh, blocks).to_local() * (rank + 1)
                x = DTensor.from_local(local, mesh, src, run_check=False, shape=full.shape,
                                       stride=full.stride())
                out.append(x.redistribute(mesh, dst).to_local().clone())
        except Exception as e:
            out.append(type(e).__name__)
    return out


def _worker(rank, store_dir, results):
    if dist.is_initialized():  # a fake group forked from the test process (torch_cases)
        dist.destroy_process_group()
    dist.init_process_group("gloo", init_method=f"file://{store_dir}/store", rank=rank,
                            world_size=4)
    try:
        plain = _program(rank, 41)
        with rt.use_reshard_planner():
            switched = _program(rank, 41)
            stats = rt.planner_stats()
        after = rt.reshard_planner_enabled()
        same = [type(a) is type(b) and (a == b if isinstance(a, str) else
                                          a.shape == b.shape and torch.equal(a, b))
                for a, b in zip(plain, switched)]
        results[rank] = (sum(same), len(same), sum(isinstance(a, str) for a in plain), stats,
                         after)
        dist.barrier()  # every rank done before any tears gloo down (gloo_processes.py)
    finally:
        dist.destroy_process_group()


class PlannerSwitch(unittest.TestCase):
    def test_dtensor_programs_give_the_same_results_with_reshards_plans(self):
        with tempfile.TemporaryDirectory() as store_dir:
            results = mp.Manager().dict()
            mp.start_processes(_worker, args=(store_dir, results), nprocs=4,
                               start_method="fork")
            for rank in range(4):
                same, total, failed, stats, after = results[rank]
                self.assertEqual(same, total, f"rank {rank}: {total - same} results differ")
                self.assertEqual(failed, 0, f"rank {rank}: {failed} programs failed")
                self.assertGreater(stats["planned"], 0)
                self.assertEqual(stats["by_torch"], 0)
                self.assertFalse(after, "the with block switches it back")

    def test_other_internals_are_refused_naming_the_torch_version(self):
        from torch.distributed.tensor import _redistribute
        own = _redistribute._gen_transform_infos_non_cached
        _redistribute._gen_transform_infos_non_cached = lambda src, dst: []
        try:
            with self.assertRaises(RuntimeError) as e:
                rt.use_reshard_planner()
            self.assertIn(torch.__version__, str(e.exception))
            self.assertFalse(rt.reshard_planner_enabled())
        finally:
            _redistribute._gen_transform_infos_non_cached = own

    def test_redistribute_cost_prices_reshards_plan(self):
        import torch_cases
        from torch.distributed.tensor import _collective_utils
        rng = random.Random(5)
        checked = 0
        while checked < 50:
            case = torch_cases.draw_case(rng)
            case["algorithm"] = "auto"
            mesh = torch_cases.fake_mesh(case["mesh"], case["coordinate"])
            src, dst = torch_cases.specs(case, mesh)
            try:
                want = rt.reshard.plan(**torch_cases.request(case)).cost
            except (ValueError, rt.reshard.NoPlanError):
                continue
            with rt.use_reshard_planner():
                got = _collective_utils.redistribute_cost(src, dst)
            if got != float("inf"):
                self.assertAlmostEqual(got, want, delta=1e-9 * max(1.0, want))
                checked += 1


if __name__ == "__main__":
    unittest.main()
