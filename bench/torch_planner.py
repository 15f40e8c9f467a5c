"""Planning time per case: the installed torch's DTensor planner vs reshard (pytorch, native).

    python3 -m pip install ./python                       # reshard in this environment
    python3 bench/torch_planner.py [CASES.jsonl] [--fresh N] [--seed S]

Sets: CASES.jsonl (default bench/data/hard4d_large.jsonl, the 200 large-mesh
cases: 4-D meshes of 16-4,096 ranks, graph plans) and N freshly drawn cases on
meshes of 1,024-8,192 ranks (python/tests/torch_cases.py, large=True: graph,
greedy and auto, shard orders, _StridedShard; default 200, seed printed).
Each case is planned once by each planner (reshard's plan cache never answers:
every request is new to the process): torch's
`_redistribute._gen_transform_infos_non_cached` on a fake process group whose
rank is the case's coordinate (devices_per_host as torch computes it for a
CPU mesh), reshard.plan(mode="pytorch") with the same devices_per_host and
cost model "pytorch" (torch's), and reshard.plan(mode="native") on the same
request (its default model). Cases torch or reshard cannot plan are counted
and left out. Prints per set: median and p90 seconds per case, and torch's
median / reshard's median; and how many pytorch-mode plans equal torch's steps.
"""

import argparse
import json
import os
import re
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python", "tests"))

import random  # noqa: E402

from torch.distributed.tensor import Partial, Replicate, Shard  # noqa: E402
from torch.distributed.tensor._dtensor_spec import ShardOrderEntry  # noqa: E402
from torch.distributed.tensor.placement_types import _StridedShard  # noqa: E402

import reshard  # noqa: E402
import torch_cases  # noqa: E402

_TOKEN = re.compile(r"S\((\d+)\)(?:\[(\d+)\])?|_S\((\d+), *(\d+)\)|R|P(?:\((\w+)\))?")


def _from_notation(text):
    """(placements, shard order or None) of a §3 notation layout."""
    placements, positions = [], {}
    for m, t in enumerate(_TOKEN.finditer(text)):
        if t.group(0).startswith("S("):
            d = int(t.group(1))
            placements.append(Shard(d))
            positions.setdefault(d, []).append((int(t.group(2) or 0), m))
        elif t.group(0).startswith("_S("):
            placements.append(_StridedShard(int(t.group(3)), split_factor=int(t.group(4))))
        elif t.group(0) == "R":
            placements.append(Replicate())
        else:
            op = t.group(5) or "sum"
            placements.append(Partial("product" if op == "prod" else op))
    if any(isinstance(p, _StridedShard) for p in placements):
        return placements, None
    order = tuple(ShardOrderEntry(tensor_dim=d, mesh_dims=tuple(m for _, m in sorted(ms)))
                  for d, ms in sorted(positions.items()))
    return placements, order


def _file_cases(path):
    cases = []
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            c = json.loads(line)
            src, src_order = _from_notation(c["src"])
            dst, dst_order = _from_notation(c["dst"])
            cases.append({"mesh": c["mesh"], "shape": c["shape"], "dtype": c["dtype"],
                          "algorithm": c.get("algorithm", "auto"),
                          "coordinate": c.get("coordinate", [0] * len(c["mesh"])),
                          "src_placements": src, "src_order": src_order,
                          "dst_placements": dst, "dst_order": dst_order})
    return cases


def _time(fn):
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def _measure(cases):
    times = {"torch": [], "pytorch": [], "native": []}
    skipped, same = 0, 0
    for i, case in enumerate(cases):
        if i % 20 == 0:
            print(f"  case {i}/{len(cases)}", file=sys.stderr, flush=True)
        request = torch_cases.request(case)
        mesh = torch_cases.fake_mesh(case["mesh"], case["coordinate"])
        src, dst = torch_cases.specs(case, mesh)
        try:
            t_torch, infos = _time(lambda: torch_cases.torch_plan(src, dst, case["algorithm"]))
            t_pytorch, plan = _time(lambda: reshard.plan(**request))
            native = dict(request, mode="native", algorithm="auto")
            del native["cost_model"]
            t_native, _ = _time(lambda: reshard.plan(**native))
        except (ValueError, reshard.NoPlanError, AssertionError):
            skipped += 1
            continue
        times["torch"].append(t_torch)
        times["pytorch"].append(t_pytorch)
        times["native"].append(t_native)
        same += torch_cases.steps(infos) == [
            (s.mesh_dim, s.src, s.dst, s.logical_shape) for s in plan.steps]
    return times, skipped, same


def _p90(values):
    return sorted(values)[min(len(values) - 1, int(0.9 * len(values)))]


def _report(name, cases):
    times, skipped, same = _measure(cases)
    n = len(times["torch"])
    print(f"{name}: {n} cases planned by all three ({skipped} skipped), pytorch mode's steps "
          f"equal torch's on {same}")
    t_med = statistics.median(times["torch"])
    for planner in ("torch", "pytorch", "native"):
        med, p90 = statistics.median(times[planner]), _p90(times[planner])
        ratio = "" if planner == "torch" else f"  torch/this: median {t_med / med:,.0f}x"
        print(f"  {planner:8s} median {med * 1e3:10.3f} ms  p90 {p90 * 1e3:10.3f} ms  "
              f"total {sum(times[planner]):8.2f} s{ratio}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="?",
                        default=os.path.join(ROOT, "bench", "data", "hard4d_large.jsonl"))
    parser.add_argument("--fresh", type=int, default=200)
    parser.add_argument("--seed", type=int, default=time.time_ns() % (1 << 31))
    args = parser.parse_args()
    import torch
    print(f"torch {torch.__version__}, reshard at {os.path.dirname(reshard.__file__)}")
    _report(os.path.relpath(args.cases, ROOT), _file_cases(args.cases))
    rng = random.Random(args.seed)
    _report(f"fresh large-mesh set (--seed {args.seed})",
            [torch_cases.draw_case(rng, large=True) for _ in range(args.fresh)])


if __name__ == "__main__":
    main()
