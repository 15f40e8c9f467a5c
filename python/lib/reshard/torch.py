"""reshard.torch: redistribute real torch tensors with torch.distributed.

    import reshard.torch as rt
    local = rt.local_shard(full, mesh=[2, 2], src="S(0)[1]S(0)[0]", rank=dist.get_rank())
    out = rt.redistribute(local, mesh=[2, 2], shape=full.shape, src="S(0)[1]S(0)[0]", dst="RS(1)")

Ranks: rank r of the process group (default: the world) is the mesh
coordinate of r in row-major order (docs/planner-semantics.md §1). A rank's
local tensor is its block of the global tensor: each tensor dim split by its
mesh dims in shard order, as torch.chunk splits (§2); Partial mesh dims hold
values whose reduction is the tensor.

redistribute plans the request once per process (the plan is cached, and the
same on every rank: ranks plan at coordinate 0) and runs each step of the
plan (§11) on the members of its group: the ranks that share every
coordinate outside the step's mesh dims, ordered row-major over them. One
torch.distributed subgroup per (mesh, mesh dims, coordinate outside them) is
created the first time a step needs it and kept. Collectives:

    step                 collective                   note
    all_gather S->R      all_gather (padded pieces)   pieces placed at their nested-chunk offsets
    all_to_all S->S      all_to_all_single            exact pieces, split sizes per member
    permute, exchange    all_to_all_single            as all_to_all; replicas: lowest index sends
    all_reduce P->R      all_reduce                   avg: SUM, then divide by the group size
    reduce_scatter P->S  reduce_scatter (padded)      gloo has none: all_reduce, keep own block
    chunk R->S           (local slice)
    partition R->P       (local)                      sum: coordinate 0 keeps, others zeros

gloo (torch 1.13) has no all_to_all (list form), no reduce_scatter and no
ReduceOp.AVG: all_to_all_single, all_reduce plus a local slice, and SUM plus
a division are what run there. The code paths for NCCL are the same calls on
CUDA tensors (not run on this machine: no GPU).

Creating subgroups (torch.distributed.new_group) is collective over the
default group: with a `group` smaller than the world, every process of the
default group must call redistribute with the same arguments.
"""

import functools
import itertools
import re

import torch
import torch.distributed as dist

import reshard
from reshard import _reshard

_DTYPES = {
    torch.float64: "f64", torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16",
    torch.int64: "i64", torch.int32: "i32", torch.int16: "i16", torch.int8: "i8",
    torch.uint8: "u8", torch.bool: "bool",
}


def _coordinate(mesh, rank):
    coordinate = []
    for size in reversed(mesh):
        coordinate.append(rank % size)
        rank //= size
    return tuple(reversed(coordinate))


@functools.lru_cache(maxsize=4096)
def _block(mesh, shape, state, coordinate):
    """((offset, size), ...) per tensor dim of the rank's shard (§2; planner/chunk.h)."""
    return tuple(_reshard.local_block(list(mesh), list(shape), state, list(coordinate)))


def _slices(block, base):
    """Index of `block` (global) within a tensor holding `base` (global)."""
    return tuple(slice(o - b, o - b + s) for (o, s), (b, _) in zip(block, base))


def _intersect(a, b):
    out = []
    for (ao, asz), (bo, bsz) in zip(a, b):
        lo, hi = max(ao, bo), min(ao + asz, bo + bsz)
        out.append((lo, max(hi - lo, 0)))
    return tuple(out)


def _numel(block):
    n = 1
    for _, s in block:
        n *= s
    return n


def _split_partial(value, op, n, c):
    """Member c's share of `value` on a Partial mesh dim of size n: reducing the shares gives value.

    A fixed integer pattern, so that integer-valued tensors reduce back exactly.
    """
    if n == 1:
        return value
    pattern = (torch.arange(value.numel()) % 5 - 2).reshape(value.shape).to(value.dtype)
    others = sum(range(1, n))
    if op == "sum":  # shares sum to value
        return value - pattern * others if c == 0 else pattern * c
    if op == "avg":  # shares sum to n * value
        return value - pattern * others if c == 0 else value + pattern * c
    if op == "max":
        return value if c == 0 else value - c * (pattern.abs() + 1)
    if op == "min":
        return value if c == 0 else value + c * (pattern.abs() + 1)
    return value if c == 0 else torch.ones_like(value)  # prod


def local_shard(full, mesh, src, rank):
    """This rank's local tensor of `full` laid out as `src` (uneven shards as torch.chunk).

    Partial mesh dims get a deterministic split whose reduction (sum, avg, max,
    min, prod) along that mesh dim is the value; member 0 of each holds the
    value adjusted by the others' shares.
    """
    mesh = tuple(int(m) for m in mesh)
    state = reshard.notation(src, field="src")
    coordinate = _coordinate(mesh, rank)
    shape = tuple(full.shape)
    value = full
    placements = _placements(mesh, shape, state)
    for m, placement in enumerate(placements):
        if placement.startswith("P("):
            value = _split_partial(value, placement[2:-1], mesh[m], coordinate[m])
    block = _block(mesh, shape, state, coordinate)
    return value[_slices(block, [(0, s) for s in shape])].clone()


@functools.lru_cache(maxsize=4096)
def _placements(mesh, shape, state):
    """Each mesh dim's placement token, without order suffix, of the state as planned (§3, §7)."""
    plan = reshard.plan(mesh=list(mesh), shape=list(shape), src=state, dst=state)
    return tuple(re.findall(r"S\(\d+\)|R|P\(\w+\)", re.sub(r"\[\d+\]", "", plan.states[0])))


_PLANS = {}


def _plan(mesh, shape, src, dst, dtype, options):
    key = (mesh, shape, src, dst, dtype, tuple(sorted(options.items())))
    plan = _PLANS.get(key)
    if plan is None:
        plan = reshard.plan(mesh=list(mesh), shape=list(shape), src=src, dst=dst, dtype=dtype,
                            **options)
        _PLANS[key] = plan
    return plan


class _Groups:
    """Subgroups of a process group, one per set of mesh ranks, created once per process."""

    _cache = {}

    @classmethod
    def of(cls, group, mesh, dims, ranks):
        """The process group of the mesh ranks `ranks`, the members of a step on `dims`."""
        if len(ranks) == dist.get_world_size(group):
            return group
        key = (id(group), ranks)
        if key not in cls._cache:
            cls._create_all(group, mesh, dims)
        return cls._cache[key]

    @classmethod
    def _create_all(cls, group, mesh, dims):
        """Every group of a step on `dims`: new_group is collective, so all in the same order."""
        world = group is None or group == dist.group.WORLD
        outside = [m for m in range(len(mesh)) if m not in dims]
        for rest in itertools.product(*[range(mesh[m]) for m in outside]):
            ranks = tuple(_member_ranks(mesh, dims, dict(zip(outside, rest))))
            global_ranks = ranks if world else [dist.get_global_rank(group, r) for r in ranks]
            cls._cache[(id(group), ranks)] = dist.new_group(ranks=list(global_ranks))


def _member_ranks(mesh, dims, fixed):
    """Mesh ranks of a group: coordinates `fixed` outside dims, row-major over dims ascending."""
    ranks = []
    for inside in itertools.product(*[range(mesh[m]) for m in dims]):
        coordinate = dict(fixed)
        coordinate.update(zip(dims, inside))
        rank = 0
        for m, size in enumerate(mesh):
            rank = rank * size + coordinate[m]
        ranks.append(rank)
    return ranks


class _StepContext:
    """One step at one rank: its group's members and every member's blocks."""

    def __init__(self, mesh, shape, before, after, dims, coordinate, group, communicates):
        self.dims = dims
        fixed = {m: coordinate[m] for m in range(len(mesh)) if m not in dims}
        self.ranks = tuple(_member_ranks(mesh, dims, fixed))
        self.n = len(self.ranks)
        self.me = self.ranks.index(_member_ranks(mesh, (), dict(enumerate(coordinate)))[0])
        coords = [_coordinate(mesh, r) for r in self.ranks]
        self.before = [_block(mesh, shape, before, c) for c in coords]
        self.after = [_block(mesh, shape, after, c) for c in coords]
        self.pg = None
        if communicates and self.n > 1:
            self.pg = _Groups.of(group, mesh, dims, self.ranks)


def _reduce_op(op):
    return {"sum": dist.ReduceOp.SUM, "avg": dist.ReduceOp.SUM, "max": dist.ReduceOp.MAX,
            "min": dist.ReduceOp.MIN, "prod": dist.ReduceOp.PRODUCT}[op]


def _gloo(pg):
    return dist.get_backend(pg) == "gloo"


def _all_gather(local, ctx, dim):
    mine, out_block = ctx.before[ctx.me], ctx.after[ctx.me]
    c = max(b[dim][1] for b in ctx.before)
    out = local.new_zeros([s for _, s in out_block])
    if c == 0:
        return out
    pad = list(local.shape)
    pad[dim] = c
    send = local.new_zeros(pad)
    send.narrow(dim, 0, mine[dim][1]).copy_(local)
    pieces = [torch.empty_like(send) for _ in range(ctx.n)]
    dist.all_gather(pieces, send.contiguous(), group=ctx.pg)
    for j, piece in enumerate(pieces):
        block = ctx.before[j]
        out[_slices(block, out_block)] = piece.narrow(dim, 0, block[dim][1])
    return out


def _exchange(local, ctx):
    """Member j receives the part of after_j it does not hold: all_to_all, group all_to_all,
    permute and exchange. Among replicas (members with equal before blocks) the lowest-index
    one sends: the same pieces as the C++ routes (§11.1), without their load balancing."""
    first = [ctx.before.index(b) for b in ctx.before]  # each member's class: its first holder

    def piece(i, j):  # what member i sends member j; None: nothing
        if i != j and (first[i] != i or ctx.before[i] == ctx.before[j]):
            return None  # another replica sends it, or j holds it already
        return _intersect(ctx.before[i], ctx.after[j])

    def empty_like_box(box):
        return tuple((o, 0) for o, _ in box)

    mine_before, mine_after = ctx.before[ctx.me], ctx.after[ctx.me]
    sends = [piece(ctx.me, j) or empty_like_box(mine_before) for j in range(ctx.n)]
    recvs = [piece(i, ctx.me) or empty_like_box(mine_after) for i in range(ctx.n)]
    send = torch.cat([local[_slices(b, mine_before)].reshape(-1) for b in sends])
    receive = local.new_empty(sum(_numel(b) for b in recvs))
    dist.all_to_all_single(receive, send.contiguous(), [_numel(b) for b in recvs],
                           [_numel(b) for b in sends], group=ctx.pg)
    out = local.new_empty([s for _, s in mine_after])
    offset = 0
    for block in recvs:
        size = _numel(block)
        if size:
            out[_slices(block, mine_after)] = receive[offset:offset + size].reshape(
                [s for _, s in block])
        offset += size
    return out


def _all_reduce(local, ctx, op):
    out = local.clone()
    dist.all_reduce(out, op=_reduce_op(op), group=ctx.pg)
    return out / ctx.n if op == "avg" else out


def _reduce_scatter(local, ctx, op, dim):
    mine_before, mine_after = ctx.before[ctx.me], ctx.after[ctx.me]
    if _gloo(ctx.pg):  # gloo has no reduce_scatter (torch 1.13)
        return _all_reduce(local, ctx, op)[_slices(mine_after, mine_before)].clone()
    c = max(b[dim][1] for b in ctx.after)
    slots = []
    for block in ctx.after:
        shape = list(local.shape)
        shape[dim] = c
        slot = local.new_zeros(shape)
        slot.narrow(dim, 0, block[dim][1]).copy_(local[_slices(block, mine_before)])
        slots.append(slot)
    out = torch.empty_like(slots[0])
    dist.reduce_scatter(out, slots, op=_reduce_op(op), group=ctx.pg)
    out = out.narrow(dim, 0, mine_after[dim][1]).clone()
    return out / ctx.n if op == "avg" else out


def _tensor_dim(placement):
    return int(placement[placement.index("(") + 1:placement.index(")")])


def _run_step(local, step, ctx, coordinate):
    kind = step.collective
    mine_before, mine_after = ctx.before[ctx.me], ctx.after[ctx.me]
    if ctx.n == 1:  # a group of size 1 moves nothing (§11)
        return local
    if kind == "chunk":
        return local[_slices(mine_after, mine_before)].clone()
    if kind == "partition":
        op = step.dst[2:-1]
        if op == "prod":
            raise ValueError("partition R->P(prod) is not supported (docs/planner-semantics.md §11)")
        keep = op != "sum" or all(coordinate[m] == 0 for m in ctx.dims)
        return local if keep else torch.zeros_like(local)
    if kind == "all_gather":
        return _all_gather(local, ctx, _tensor_dim(step.src))
    if kind in ("all_to_all", "permute", "exchange"):
        return _exchange(local, ctx)
    if kind == "all_reduce":
        return _all_reduce(local, ctx, step.src[2:-1])
    if kind == "reduce_scatter":
        return _reduce_scatter(local, ctx, step.src[2:-1], _tensor_dim(step.dst))
    raise ValueError(f"unknown step kind {kind!r}")


def redistribute(local, mesh, shape, src, dst, group=None, **options):
    """This rank's local tensor of the same global tensor, laid out as `dst`.

    `options` are further request keys (mode, algorithm, cost_model,
    devices_per_host, profile, max_memory); dtype comes from `local`.
    Every rank of `group` (default: the world) must call it with the same
    arguments.
    """
    if "coordinate" in options or "dtype" in options:
        raise ValueError("coordinate, dtype: taken from the process group and the tensor")
    for key in ("dst_mesh", "src_ranks", "dst_ranks"):
        if key in options:
            raise ValueError(f"{key}: redistribute moves within one mesh; plan a move between "
                             "meshes with reshard.plan (spec §14)")
    mesh = tuple(int(m) for m in mesh)
    shape = tuple(int(s) for s in shape)
    ranks = 1
    for m in mesh:
        ranks *= m
    if dist.get_world_size(group) != ranks:
        raise ValueError(f"mesh: {list(mesh)} has {ranks} ranks, the process group "
                         f"{dist.get_world_size(group)}")
    dtype = _DTYPES.get(local.dtype)
    if dtype is None:
        raise ValueError(f"dtype: {local.dtype} is not supported")
    src_text = reshard.notation(src, field="src")
    dst_text = reshard.notation(dst, field="dst")
    plan = _plan(mesh, shape, src_text, dst_text, dtype, options)
    coordinate = _coordinate(mesh, dist.get_rank(group))
    expected = tuple(s for _, s in _block(mesh, shape, plan.states[0], coordinate))
    if tuple(local.shape) != expected:
        raise ValueError(f"local: shape {list(local.shape)}, but src {src_text} gives this rank "
                         f"(coordinate {list(coordinate)}) {list(expected)}")
    return _execute(local, mesh, shape, plan.states, plan.steps, coordinate, group)


def _execute(local, mesh, shape, states, steps, coordinate, group):
    """Runs steps[i] from states[i] to states[i + 1] (Plan.states, Plan.steps) at this rank."""
    for i, step in enumerate(steps):
        dims = tuple(sorted(step.mesh_dims))
        ctx = _StepContext(mesh, shape, states[i], states[i + 1], dims, coordinate, group,
                           step.collective not in ("chunk", "partition"))
        local = _run_step(local, step, ctx, coordinate)
    return local

from reshard._planner_switch import reshard_planner_enabled, stats as planner_stats, use_reshard_planner  # noqa: E402,F401
