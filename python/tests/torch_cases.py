"""Random redistribution cases planned by the installed torch's own planner.

Shared by torch_parity_test.py and bench/torch_planner.py. A case is a
`reshard batch` request (mesh, shape, dtype, src, dst, algorithm, coordinate,
devices_per_host, mode "pytorch", cost_model "pytorch") plus the same layouts
as torch's placement objects and shard orders. torch plans it with
`_gen_transform_infos_non_cached` on a fake process group whose rank is the
case's coordinate (a CPU DeviceMesh, so devices_per_host is what torch computes
for "cpu": `_mesh_resources.num_devices_per_host`).
"""

import math

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import DeviceMesh, _mesh_resources
from torch.distributed.tensor import Partial, Replicate, Shard
from torch.distributed.tensor import _collective_utils as collective_utils
from torch.distributed.tensor import _redistribute as redistribute
from torch.distributed.tensor._dtensor_spec import DTensorSpec, ShardOrderEntry, TensorMeta
from torch.distributed.tensor.placement_types import _StridedShard
from torch.testing._internal.distributed.fake_pg import FakeStore

import reshard

DTYPES = {
    "f64": torch.float64, "f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
    "i64": torch.int64, "i32": torch.int32, "i16": torch.int16, "i8": torch.int8,
    "u8": torch.uint8, "bool": torch.bool,
}
# Every reduce op torch's Partial takes; torch spells prod "product" (reshard "prod").
REDUCE_OPS = ["sum", "avg", "max", "min", "product"]
ALGORITHMS = {"graph": True, "greedy": False, "auto": None}


def devices_per_host():
    return _mesh_resources.num_devices_per_host("cpu")


def _rank_of(mesh, coordinate):
    rank = 0
    for size, c in zip(mesh, coordinate):
        rank = rank * size + c
    return rank


def _draw_placements(rng, mesh, ndim, ops):
    placements = []
    for _ in mesh:
        kind = rng.random()
        if kind < 0.5:
            placements.append(Shard(rng.randrange(ndim)))
        elif kind < 0.75:
            placements.append(Replicate())
        else:
            placements.append(Partial(rng.choice(ops)))
    return placements


def _draw_order(rng, placements):
    """A random shard order: each tensor dim's mesh dims, shuffled."""
    holders = {}
    for m, p in enumerate(placements):
        if isinstance(p, Shard):
            holders.setdefault(p.dim, []).append(m)
    order = []
    for d in sorted(holders):
        dims = holders[d]
        if rng.random() < 0.5:
            rng.shuffle(dims)
        order.append(ShardOrderEntry(tensor_dim=d, mesh_dims=tuple(dims)))
    return tuple(order)


def _strided(mesh, placements, order):
    """The same layout as _StridedShard placements (spec §7 encode), or None if it needs none."""
    out = list(placements)
    strided = False
    for entry in order:
        for p, k in enumerate(entry.mesh_dims):
            sf = math.prod(mesh[j] for j in entry.mesh_dims[:p] if j > k)
            if sf > 1:
                out[k] = _StridedShard(entry.tensor_dim, split_factor=sf)
                strided = True
    return out if strided else None


def draw_case(rng, large=False):
    """One random case: meshes of 1-4 dims of sizes 1-8 (large: 3-4 dims, at least 1024 ranks)."""
    while True:
        ndim_mesh = rng.randint(3, 4) if large else rng.randint(1, 4)
        mesh = [rng.choice([1, 2, 3, 4, 5, 6, 7, 8]) if not large else rng.choice([4, 8, 16, 32])
                for _ in range(ndim_mesh)]
        if not large or math.prod(mesh) >= 1024 and math.prod(mesh) <= 8192:
            break
    ndim = rng.randint(1, 4)
    # Small dims make uneven and empty shards; some large ones even ones. reshard
# takes no empty tensor dims (size 0).
    shape = [rng.choice([1, 2, 3, 5, 7, 8, 13, 16, 31, 64, 100]) for _ in range(ndim)]
    # One reduce op, or sum and avg: the only ops a layout may mix (reshard
    # refuses other mixes as input; spec §4).
    ops = ["sum", "avg"] if rng.random() < 0.2 else [rng.choice(REDUCE_OPS)]
    src = _draw_placements(rng, mesh, ndim, ops)
    dst = _draw_placements(rng, mesh, ndim, ops)
    src_order, dst_order = _draw_order(rng, src), _draw_order(rng, dst)
    src_strided = _strided(mesh, src, src_order) if rng.random() < 0.15 else None
    coordinate = [rng.randrange(s) for s in mesh]
    return {
        "mesh": mesh, "shape": shape, "dtype": rng.choice(list(DTYPES)),
        "algorithm": rng.choice(list(ALGORITHMS)), "coordinate": coordinate,
        "src_placements": src_strided or src, "src_order": None if src_strided else src_order,
        "dst_placements": dst, "dst_order": dst_order,
    }


def request(case):
    """The case as reshard.plan's keyword arguments (pytorch mode)."""
    return {
        "mesh": case["mesh"], "shape": case["shape"], "dtype": case["dtype"],
        "src": reshard.notation(case["src_placements"], case["src_order"], field="src"),
        "dst": reshard.notation(case["dst_placements"], case["dst_order"], field="dst"),
        "algorithm": case["algorithm"], "coordinate": case["coordinate"],
        "devices_per_host": devices_per_host(), "mode": "pytorch", "cost_model": "pytorch",
    }


MAX_RANKS = 1 << 14


def fake_mesh(mesh, coordinate):
    """A CPU DeviceMesh of shape `mesh` seen from the rank at `coordinate`.

    One fake process group of MAX_RANKS ranks serves every mesh; the mesh's own
    rank is the case's (DeviceMesh's _rank), so coordinates are the case's.
    """
    if not dist.is_initialized():
        dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=MAX_RANKS)
    # Keyed by a weak reference to a mesh, and meshes compare equal whatever
    # their rank: a planner of another coordinate must not be reused.
    redistribute.clear_redistribute_planner_cache()
    n = math.prod(mesh)
    return DeviceMesh("cpu", torch.arange(n).reshape(mesh), _init_backend=False,
                      _rank=_rank_of(mesh, coordinate))


def specs(case, device_mesh):
    meta = TensorMeta(torch.Size(case["shape"]), tuple(torch.empty(case["shape"]).stride()),
                      DTYPES[case["dtype"]])

    def spec(placements, order):
        if order is None:
            return DTensorSpec(device_mesh, tuple(placements), tensor_meta=meta)
        return DTensorSpec(device_mesh, tuple(placements), tensor_meta=meta, shard_order=order)

    return (spec(case["src_placements"], case["src_order"]),
            spec(case["dst_placements"], case["dst_order"]))


def torch_plan(src, dst, algorithm):
    """torch's transform infos for src -> dst (algorithm as in ALGORITHMS)."""
    return redistribute._gen_transform_infos_non_cached(src, dst, ALGORITHMS[algorithm])


def torch_trace(src, infos):
    return redistribute.DTensorRedistributePlanner.stringify_transform_infos(
        src.mesh, infos, src.placements, src.shard_order,
        use_strided_shard_as_shard_order=bool(src.use_strided_shard_as_shard_order))


def torch_cost(src, infos):
    """redistribute_cost's sum over these transform infos (torch's loop, torch's functions)."""
    topo = collective_utils.MeshTopoInfo.build_from_mesh(src.mesh)
    comm_bytes_gb = collective_utils.spec_to_bytes(src) / src.num_shards / 1024 / 1024 / 1024
    cost = 0.0
    for info in infos:
        step, comm_bytes_gb = collective_utils._compute_placement_transition_cost(
            *info.src_dst_placements, topo, info.mesh_dim, comm_bytes_gb)
        cost += step
    return cost


def token(placement):
    """A torch placement as reshard's notation token."""
    return reshard.notation([placement])


def steps(infos):
    return [(i.mesh_dim, token(i.src_dst_placements[0]), token(i.src_dst_placements[1]),
             [int(s) for s in i.logical_shape]) for i in infos]


def runnable(infos, mesh):
    """False when torch's executor refuses a step: S->P or P(x)->P(y) on a mesh dim of size > 1."""
    for info in infos:
        a, b = info.src_dst_placements
        if mesh[info.mesh_dim] > 1 and b.is_partial() and not a.is_replicate():
            return False
    return True
