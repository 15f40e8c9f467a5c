"""One rank's part of a plan, run with torch.distributed (docs/planner-semantics.md §11).

`compile_steps` turns a plan's steps into programs for this rank: the
members of each step's group (row-major over its mesh dims), every member's
block before and after the step (NestedChunk, §11, through
`reshard._reshard.local_block`), the process group, and which pieces move.
`run` then does only tensor work and collectives. Collectives per step:

    step                 collective                   note
    all_gather S->R      all_gather_into_tensor       pieces padded to the largest, placed at
                                                      their nested-chunk offsets
    all_to_all S->S      all_to_all_single            exact pieces, split sizes per member
    permute, exchange    all_to_all_single            as all_to_all; among replicas the
                                                      lowest member index sends
    all_reduce P->R      all_reduce                   avg: SUM, then divide by the group size
    reduce_scatter P->S  reduce_scatter_tensor        slots padded to the largest piece
    chunk R->S           (local slice)
    partition R->P       (local)                      sum: coordinate 0 keeps, others zeros

Every member knows every member's blocks, so all of them decide alike to
skip a collective that would move nothing (every piece of the group empty:
torch 1.13's gloo died with SIGFPE on those) and keep only the local copy.
The piece a member keeps is copied locally, never sent to itself.

Dtypes: collectives that only move data send int16 as float16 bits (neither
gloo nor NCCL has int16); a reduction of a dtype the backend lacks, or of
P(avg) on integers, is refused before anything is sent.
"""

import functools
import itertools

import torch
import torch.distributed as dist

from reshard import _reshard
from reshard._torch_groups import group_of

# Newer torch names them *_single (the *_into_tensor / *_tensor names are deprecated).
ALL_GATHER = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
_REDUCE_SCATTER = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor
# Moved as another dtype of the same width: neither gloo nor NCCL has int16.
_WIRE_DTYPES = {torch.int16: torch.float16}
_REDUCE_OPS = {"sum": "SUM", "avg": "SUM", "max": "MAX", "min": "MIN", "prod": "PRODUCT"}


class Mesh:
    """Where a plan runs: mesh sizes, this rank's coordinate, the global rank of every
    mesh rank (row-major), process groups to reuse and the backend of new ones."""

    def __init__(self, shape, coordinate, global_ranks, existing_groups, backend):
        self.shape = tuple(shape)
        self.coordinate = tuple(coordinate)
        self.global_ranks = list(global_ranks)
        self.existing_groups = list(existing_groups)
        self.backend = backend

    def rank_at(self, coordinate):
        rank = 0
        for size, c in zip(self.shape, coordinate):
            rank = rank * size + c
        return self.global_ranks[rank]

    def members(self, dims):
        """Coordinates of the members of this rank's group on `dims`, row-major over dims."""
        coords = []
        for inside in itertools.product(*[range(self.shape[m]) for m in dims]):
            c = list(self.coordinate)
            for m, i in zip(dims, inside):
                c[m] = i
            coords.append(tuple(c))
        return coords

    def group(self, coords):
        """The Group of the members at `coords` (created once per process)."""
        return group_of([self.rank_at(c) for c in coords], self.existing_groups, self.backend)


@functools.lru_cache(maxsize=1 << 14)
def block(mesh, shape, state, coordinate):
    """((offset, size), ...) per tensor dim of the block at `coordinate` (§2; chunk.h)."""
    return tuple(_reshard.local_block(list(mesh), list(shape), state, list(coordinate)))


def slices(box, base):
    """Index of `box` (global) within a tensor holding `base` (global)."""
    return tuple(slice(o - b, o - b + s) for (o, s), (b, _) in zip(box, base))


def _intersect(a, b):
    out = []
    for (ao, asz), (bo, bsz) in zip(a, b):
        lo, hi = max(ao, bo), min(ao + asz, bo + bsz)
        out.append((lo, max(hi - lo, 0)))
    return tuple(out)


def _numel(box):
    n = 1
    for _, s in box:
        n *= s
    return n


def _sizes(box):
    return [s for _, s in box]


def _tensor_dim(placement):
    return int(placement[placement.index("(") + 1:placement.index(")")])


def _collective(what, dtype, pg, call):
    """Runs a collective; a dtype the backend lacks becomes a TypeError saying so."""
    try:
        return call()
    except RuntimeError as e:
        if "Invalid scalar type" not in str(e) and "Unsupported" not in str(e):
            raise
        raise TypeError(
            f"dtype {dtype}: the {dist.get_backend(pg)} backend of torch {torch.__version__} has "
            f"no {what} for it ({e}). Cast the tensor to a dtype it has (e.g. float32, int32) "
            "before redistributing, or run on a backend that has it.") from None


class _Local:
    """A step that involves no other rank: chunk, partition, or a group of size 1."""

    def __init__(self, take=None, zero=False):
        self.take, self.zero = take, zero

    def run(self, local):
        if self.zero:
            return torch.zeros_like(local)
        if self.take is None:
            return local
        return local[self.take].clone(memory_format=torch.contiguous_format)


class _AllGather:
    def __init__(self, ctx, dim):
        self.dim, self.g = dim, ctx.group
        self.n = len(ctx.before)
        self.out_shape = _sizes(ctx.after_me)
        self.c = max(b[dim][1] for b in ctx.before)
        self.pad = _sizes(ctx.before_me)
        self.pad[dim] = self.c
        self.empty = 0 in self.pad
        # Where member j's piece goes in the output, listed by group rank.
        self.places = [None] * self.n
        for j, b in enumerate(ctx.before):
            self.places[self.g.ranks[j]] = (slices(b, ctx.after_me), b[dim][1])
        # The gathered buffer is the output as it is when pieces are full and in
        # group-rank order along a dim with nothing but extent 1 before it.
        self.as_is = all(self.out_shape[d] == 1 for d in range(dim)) and all(
            size == self.c and sl[dim].start == g * self.c
            for g, (sl, size) in enumerate(self.places))

    def run(self, local):
        if self.empty:
            return local.new_zeros(self.out_shape)
        wire = _WIRE_DTYPES.get(local.dtype)
        send = local
        if local.shape[self.dim] != self.c:
            send = local.new_zeros(self.pad)
            send.narrow(self.dim, 0, local.shape[self.dim]).copy_(local)
        send = send.contiguous()
        # Gloo takes the concatenated form only: [n * pad[0], pad[1:]...].
        flat = send.new_empty([self.n * self.pad[0]] + self.pad[1:])
        if wire is not None:
            send, flat = send.view(wire), flat.view(wire)
        _collective("all_gather", local.dtype, self.g.pg, lambda: ALL_GATHER(
            flat, send, group=self.g.pg))
        buf = flat.view(local.dtype).view([self.n] + self.pad)
        if self.as_is:
            return buf.view(self.out_shape)
        out = local.new_empty(self.out_shape)
        for g, (sl, size) in enumerate(self.places):
            if size:
                out[sl] = buf[g].narrow(self.dim, 0, size)
        return out


class _Exchange:
    """all_to_all, group all_to_all, permute and exchange: member j receives the part of
    its block after the step that it does not hold (exact pieces, §11.1 without its
    load balancing: among replicas, members with equal blocks before, the lowest sends)."""

    def __init__(self, ctx):
        before, after, me, ranks = ctx.before, ctx.after, ctx.me, ctx.group.ranks
        first = [before.index(b) for b in before]

        def piece(i, j):  # what member i sends member j; None: nothing
            if i != j and (first[i] != i or before[i] == before[j]):
                return None
            box = _intersect(before[i], after[j])
            return box if _numel(box) else None

        n = len(before)
        self.g = ctx.group
        self.out_shape = _sizes(ctx.after_me)
        self.moves = any(piece(i, j) for i in range(n) for j in range(n) if i != j)
        keep = piece(me, me)
        self.keep = None if keep is None else (slices(keep, ctx.before_me),
                                               slices(keep, ctx.after_me))
        self.sends = [None] * n  # by group rank: (slices into local, numel)
        self.recvs = [None] * n  # by group rank: (slices into out, shape, numel)
        for j in range(n):
            send, recv = (piece(me, j), piece(j, me)) if j != me else (None, None)
            if send is not None:
                self.sends[ranks[j]] = (slices(send, ctx.before_me), _numel(send))
            if recv is not None:
                self.recvs[ranks[j]] = (slices(recv, ctx.after_me), _sizes(recv), _numel(recv))
        self.send_sizes = [s[1] if s else 0 for s in self.sends]
        self.recv_sizes = [r[2] if r else 0 for r in self.recvs]

    def run(self, local):
        out = local.new_empty(self.out_shape)
        if self.keep is not None:
            out[self.keep[1]] = local[self.keep[0]]
        if not self.moves:
            return out
        parts = [local[s[0]].reshape(-1) for s in self.sends if s]
        send = torch.cat(parts) if parts else local.new_empty(0)
        receive = local.new_empty(sum(self.recv_sizes))
        wire = _WIRE_DTYPES.get(local.dtype)
        send_w, receive_w = (send, receive) if wire is None else (send.view(wire),
                                                                 receive.view(wire))
        _collective("all_to_all", local.dtype, self.g.pg, lambda: dist.all_to_all_single(
            receive_w, send_w, self.recv_sizes, self.send_sizes, group=self.g.pg))
        offset = 0
        for r in self.recvs:
            if r:
                out[r[0]] = receive[offset:offset + r[2]].view(r[1])
                offset += r[2]
        return out


class _AllReduce:
    def __init__(self, ctx, op):
        self.g, self.op, self.n = ctx.group, op, len(ctx.before)

    def run(self, local):
        out = local.clone(memory_format=torch.contiguous_format)
        if out.numel():
            op = getattr(dist.ReduceOp, _REDUCE_OPS[self.op])
            _collective("all_reduce", local.dtype, self.g.pg, lambda: dist.all_reduce(
                out, op=op, group=self.g.pg))
        return out.div_(self.n) if self.op == "avg" else out


class _ReduceScatter:
    def __init__(self, ctx, op, dim):
        self.g, self.op, self.dim, self.n = ctx.group, op, dim, len(ctx.before)
        self.c = max(b[dim][1] for b in ctx.after)
        self.slot = _sizes(ctx.before_me)
        self.slot[dim] = self.c
        self.mine = ctx.after_me[dim][1]
        # Member j's block within this rank's (every member holds the same block
        # before: the group's mesh dims are Partial), listed by group rank.
        self.blocks = [None] * self.n
        for j, b in enumerate(ctx.after):
            self.blocks[self.g.ranks[j]] = (slices(b, ctx.before_me), b[dim][1])
        self.out_shape = _sizes(ctx.after_me)
        # The input is the slots as it is when blocks are full and in group-rank
        # order along a dim with nothing but extent 1 before it.
        self.as_is = all(self.slot[d] == 1 for d in range(dim)) and all(
            size == self.c and sl[dim].start == g * self.c
            for g, (sl, size) in enumerate(self.blocks))

    def run(self, local):
        if 0 in self.slot:
            return local.new_zeros(self.out_shape)
        concatenated = [self.n * self.slot[0]] + self.slot[1:]  # the form gloo takes
        if self.as_is:
            slots = local.contiguous().view(concatenated)
        else:
            slots = local.new_zeros([self.n] + self.slot)
            for g, (sl, size) in enumerate(self.blocks):
                if size:
                    slots[g].narrow(self.dim, 0, size).copy_(local[sl])
            slots = slots.view(concatenated)
        out = local.new_empty(self.slot)
        op = getattr(dist.ReduceOp, _REDUCE_OPS[self.op])
        _collective("reduce_scatter", local.dtype, self.g.pg, lambda: _REDUCE_SCATTER(
            out, slots, op=op, group=self.g.pg))
        out = out.narrow(self.dim, 0, self.mine)
        if not out.is_contiguous():
            out = out.contiguous()
        return out.div_(self.n) if self.op == "avg" else out


class _Context:
    """One step at this rank: its group's members, every member's blocks, the Group."""

    def __init__(self, mesh, shape, before, after, dims, communicates):
        coords = mesh.members(dims) if communicates else [mesh.coordinate]
        self.before = [block(mesh.shape, shape, before, c) for c in coords]
        self.after = [block(mesh.shape, shape, after, c) for c in coords]
        self.me = coords.index(mesh.coordinate)
        self.before_me, self.after_me = self.before[self.me], self.after[self.me]
        self.group = mesh.group(coords) if len(coords) > 1 else None


def _check_steps(mesh_shape, steps, dtype):
    """Refuses, before anything is sent, a step no backend can run for `dtype`."""
    for step in steps:
        if step.collective not in ("all_reduce", "reduce_scatter"):
            continue
        if all(mesh_shape[m] == 1 for m in step.mesh_dims):
            continue  # one member: nothing is reduced
        op = step.src[2:-1]
        if op == "avg" and not (dtype.is_floating_point or dtype.is_complex):
            raise ValueError(f"dtype {dtype}: the plan reduces P(avg) ({step!r}), and an average "
                             "of integers is not an integer (DTensor refuses it too); cast to a "
                             "floating dtype first")
        if dtype in _WIRE_DTYPES:
            raise TypeError(f"dtype {dtype}: the plan reduces P({op}) ({step!r}), and neither "
                            f"gloo nor NCCL has reductions of {dtype}; cast to a wider dtype "
                            "(e.g. int32) first")


def compile_step(mesh, shape, before, after, step, dtype):
    """The program of `step` (from state `before` to `after`) at this rank."""
    kind = step.collective
    dims = tuple(sorted(step.mesh_dims))
    ctx = _Context(mesh, shape, before, after, dims, kind not in ("chunk", "partition"))
    if kind == "chunk":
        return _Local(take=slices(ctx.after_me, ctx.before_me))
    if kind == "partition":
        if all(mesh.shape[m] == 1 for m in dims):  # one member: its value is the reduction
            return _Local()
        if step.dst == "P(prod)":
            raise ValueError(f"{step!r}: partition R->P(prod) is not supported "
                             "(docs/planner-semantics.md §11)")
        return _Local(zero=step.dst == "P(sum)" and any(mesh.coordinate[m] for m in dims))
    if ctx.group is None:  # a group of size 1 moves nothing (§11)
        return _Local()
    if kind == "all_gather":
        return _AllGather(ctx, _tensor_dim(step.src))
    if kind in ("all_to_all", "permute", "exchange"):
        return _Exchange(ctx)
    if kind == "all_reduce":
        return _AllReduce(ctx, step.src[2:-1])
    if kind == "reduce_scatter":
        return _ReduceScatter(ctx, step.src[2:-1], _tensor_dim(step.dst))
    raise ValueError(f"unknown step kind {kind!r}")


def compile_steps(mesh, shape, states, steps, dtype):
    """Programs of steps[i], from states[i] to states[i + 1] (Plan.states, Plan.steps)."""
    _check_steps(mesh.shape, steps, dtype)
    return [compile_step(mesh, tuple(shape), states[i], states[i + 1], step, dtype)
            for i, step in enumerate(steps)]


def run(local, programs):
    for program in programs:
        local = program.run(local)
    return local
