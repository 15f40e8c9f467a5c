"""pytorch mode plans what the installed torch plans (docs/planner-semantics.md §13).

3,000 freshly drawn cases on meshes of 1-4 dims of sizes 1-8, and 300 on
meshes of 1,024-8,192 ranks (torch_cases.draw_case: size-1 mesh dims, uneven
and empty shards, every dtype, every reduce op, random shard orders,
_StridedShard inputs, graph / greedy / auto, random rank coordinates), each
planned by torch's own planner and by reshard.plan(mode="pytorch"). A case is

* identical: the same steps (mesh_dim, src, dst, logical_shape), the same
  trace as torch's stringify_transform_infos prints it, and the same cost as
  torch's redistribute_cost sums for those steps (torch_cases.torch_cost; for
  algorithm auto also redistribute_cost itself), where torch prices the plan;
* refused: torch's plan has a step torch's executor refuses (S->P or
  P(x)->P(y) on a mesh dim of size > 1) and reshard answers NoPlanError no_path;
* anything else differs, and the test fails naming the case.

Two details: torch prints reduce op prod as "P(product)", reshard "P(prod)";
torch prices a greedy plan with a size-1 S->P or P(x)->P(y) step inf (its
transition cost is inf on any mesh dim), reshard 0 (the step moves nothing,
§8); where torch's stringify_transform_infos cannot replay its own greedy plan
(it raises), the trace is not compared. The seed is new per run (printed);
RESHARD_PARITY_SEED repeats one. The cases run on up to 4 worker processes.
"""

import math
import multiprocessing
import os
import random
import sys
import time
import unittest

import torch

import reshard
import torch_cases

SMALL_CASES = 3000
LARGE_CASES = 300


def _check(case):
    """(verdict, detail, flags) for one case: identical, refused or differ."""
    from torch.distributed.tensor import _collective_utils as collective_utils
    from torch.distributed.tensor import _redistribute as redistribute

    req = torch_cases.request(case)
    mesh = torch_cases.fake_mesh(case["mesh"], case["coordinate"])
    src, dst = torch_cases.specs(case, mesh)
    flags = set()
    try:
        infos = torch_cases.torch_plan(src, dst, case["algorithm"])
    except Exception as e:  # torch found no plan: reshard must not either
        infos, torch_error = None, f"{type(e).__name__}: {e}"
    try:
        plan, error = reshard.plan(**req), None
    except (ValueError, reshard.NoPlanError) as e:
        plan, error = None, e
    if infos is None:
        return ("differ", f"{req}: torch: {torch_error}; reshard: {plan or error}", flags)
    if not torch_cases.runnable(infos, case["mesh"]):
        if isinstance(error, reshard.NoPlanError) and "no_path" in str(error):
            return ("refused", "", flags)
        return ("differ", f"{req}: torch plans a step it cannot run, reshard: {plan or error}",
                flags)
    if plan is None:
        return ("differ", f"{req}: torch {torch_cases.steps(infos)}, reshard: {error}", flags)
    diffs = []
    want = torch_cases.steps(infos)
    got = [(s.mesh_dim, s.src, s.dst, s.logical_shape) for s in plan.steps]
    if got != want:
        diffs.append(f"steps: torch {want}, reshard {got}")
    try:
        trace = torch_cases.torch_trace(src, infos).replace("P(product)", "P(prod)")
        if trace != plan.trace:
            diffs.append(f"trace: torch {trace}, reshard {plan.trace}")
    except ValueError:
        flags.add("untraced")
    cost = torch_cases.torch_cost(src, infos)
    if math.isinf(cost):
        # Only a size-1 S->P or P(x)->P(y) step, which torch prices inf (§8).
        if not any(case["mesh"][s.mesh_dim] == 1 and s.collective == "partition" and
                   s.src[0] != "R" for s in plan.steps):
            diffs.append(f"cost: torch inf, reshard {plan.cost}")
        flags.add("inf")
    elif not _close(cost, plan.cost):
        diffs.append(f"cost: torch {cost!r}, reshard {plan.cost!r}")
    if case["algorithm"] == "auto" and not math.isinf(cost):
        redistribute._gen_transform_infos.cache_clear()
        direct = collective_utils.redistribute_cost(src, dst)
        if not _close(direct, plan.cost):
            diffs.append(f"redistribute_cost: torch {direct!r}, reshard {plan.cost!r}")
    if diffs:
        return ("differ", f"{req}: " + "; ".join(diffs), flags)
    return ("identical", "", flags)


def _close(a, b):
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def _draw(seed):
    rng = random.Random(seed)
    return ([torch_cases.draw_case(rng) for _ in range(SMALL_CASES)] +
            [torch_cases.draw_case(rng, large=True) for _ in range(LARGE_CASES)])


class TorchParity(unittest.TestCase):
    def test_pytorch_mode_plans_what_the_installed_torch_plans(self):
        seed = int(os.environ.get("RESHARD_PARITY_SEED", time.time_ns() % (1 << 31)))
        print(f"torch {torch.__version__} parity: seed {seed} (RESHARD_PARITY_SEED={seed} "
              "repeats it)", flush=True)
        cases = _draw(seed)
        workers = max(1, min(4, len(os.sched_getaffinity(0))))
        results = []
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            for result in pool.imap(_check, cases, chunksize=25):
                results.append(result)
                if len(results) % 500 == 0:
                    print(f"  {len(results)} of {len(cases)} cases", file=sys.stderr, flush=True)
        verdicts = [v for v, _, _ in results]
        identical, refused = verdicts.count("identical"), verdicts.count("refused")
        differ = [d for v, d, _ in results if v == "differ"]
        untraced = sum("untraced" in f for _, _, f in results)
        inf = sum("inf" in f for _, _, f in results)
        version = torch.__version__.split("+")[0]
        print(f"torch {version} parity: {identical} identical, {refused} refused, "
              f"{len(differ)} differ", flush=True)
        print(f"  ({untraced} identical without a trace torch can print, {inf} priced inf by "
              f"torch for a size-1 S->P or P(x)->P(y) step)", flush=True)
        self.assertEqual(differ[:5], [], f"{len(differ)} cases differ (seed {seed})")
        self.assertEqual(identical + refused, SMALL_CASES + LARGE_CASES)
        self._assert_coverage(cases, verdicts)

    def _assert_coverage(self, cases, verdicts):
        """The drawn set holds what the promise is about (so no change above hides it)."""
        planned = [c for c, v in zip(cases, verdicts) if v == "identical"]
        self.assertGreater(sum(v == "refused" for v in verdicts), 0)
        self.assertEqual({c["algorithm"] for c in planned}, {"graph", "greedy", "auto"})
        self.assertEqual({c["dtype"] for c in planned}, set(torch_cases.DTYPES))
        ops = {p.reduce_op for c in planned for p in c["src_placements"] + c["dst_placements"]
               if hasattr(p, "reduce_op")}
        self.assertEqual(ops, set(torch_cases.REDUCE_OPS))
        self.assertTrue(any(c["src_order"] is None for c in planned))  # _StridedShard inputs
        self.assertTrue(any(1 in c["mesh"] for c in planned))
        self.assertTrue(any(any(c["coordinate"]) for c in planned))
        self.assertTrue(any(len(e.mesh_dims) > 1 and list(e.mesh_dims) != sorted(e.mesh_dims)
                            for c in planned for e in c["dst_order"]))
        self.assertGreaterEqual(sum(math.prod(c["mesh"]) >= 1024 for c in planned), 200)


if __name__ == "__main__":
    unittest.main()
