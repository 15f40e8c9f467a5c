"""The Python quick start (docs/python.md, "Quick start"; scripts/demo runs it).

    python3 -m pip install ./python                       # reshard in this environment
    python3 python/examples/quick_start.py
"""

import reshard
from reshard import Layout, Partial, Replicate, Shard

# A request is a `reshard batch` line as keyword arguments.
plan = reshard.plan(mesh=[2, 2, 2], shape=[8, 8, 8], src="S(0)[1]S(0)[0]S(0)[2]",
                    dst="RS(0)[0]S(0)[1]", mode="pytorch")
print(plan)
print("first step:", plan.steps[0].collective, plan.steps[0].logical_shape)

# PyTorch-style placements and a shard order (tensor dim 0 split by mesh dims 1, 0, 2).
src = Layout((Shard(0), Shard(0), Shard(0)), shard_order=((0, (1, 0, 2)),))
print("same request with placements:", reshard.cost(mesh=[2, 2, 2], shape=[8, 8, 8], src=src,
                                                     dst="RS(0)[0]S(0)[1]", mode="pytorch"))

# Costs for a solver: repeated queries come from the cache in microseconds.
layouts = ["S(0)R", "RS(1)", "RR", [Partial("sum"), Replicate()]]
print(reshard.cost_matrix(layouts, mesh=[4, 2], shape=[1024, 4096], dtype="bf16"))

try:
    reshard.plan(mesh=[4, 2], shape=[1024, 1024], src="S(0)S(1)", dst="S(1)S(0)", max_memory=1 << 20)
except reshard.NoPlanError as e:
    print("NoPlanError:", e)
