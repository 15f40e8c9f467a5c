"""reshard.torch: redistribute DTensors with reshard's plans, run by torch.distributed.

    import reshard.torch as rt
    from torch.distributed.tensor import Shard, Replicate

    out = rt.redistribute(dtensor, [Shard(1), Shard(0)])      # a DTensor, same DeviceMesh
    out.full_tensor()                                          # torch reads it as usual
    rt.plan(dtensor, [Shard(1), Shard(0)])                     # the reshard.Plan, not run
    rt.redistribute(dtensor, [Shard(0), Shard(0)], shard_order=[(0, [1, 0])], mode="pytorch")

redistribute(dtensor, placements, *, shard_order=None, mode="native", **options)
plans the move from the DTensor's placements and shard order to
`placements` (torch's Shard, Replicate, Partial(op), _StridedShard, reshard's
own, or notation text; `shard_order` as torch writes it: ShardOrderEntry or
(tensor_dim, mesh_dims) pairs) and runs it on the DTensor's DeviceMesh. The
result carries the destination placements and shard order (a DTensorSpec
shard_order, or the _StridedShard placements given), the same global shape,
stride and dtype. `mode` is "native" (reshard's search: group collectives,
permutes, exchanges) or "pytorch" (the steps DTensor plans); `options` are
further request keys of reshard.plan (algorithm, cost_model, profile,
max_memory, devices_per_host: by default torch's device count per host for
the mesh's device type, as DTensor's cost model counts it).

Every rank of the mesh must call it with the same request, as for
DTensor.redistribute. The first time a process plans a request, the mesh's
ranks exchange a hash of it and all raise ValueError, naming who asked what,
if they differ (instead of dying inside gloo); later calls of a cached
request are not checked again. Plans are cached per process; every rank runs
the plan made at coordinate 0 (the same steps everywhere).

redistribute_local(local, mesh, shape, src, dst, group=None, **options) is
the same for a plain local tensor: rank r of `group` (default: the world) is
mesh coordinate r in row-major order; `local` is its block of a global
tensor of `shape` laid out as `src` (notation or placements); it returns the
block of `dst`. local_shard(full, mesh, src, rank) makes such a block.

Errors (before anything is sent): ValueError for a bad request (the planner's
message naming the field), a DTensor that needs autograd (this is not
differentiable), a _StridedShard that is not a shard order, P(avg) reduced
on integers; reshard.NoPlanError when no plan exists; TypeError for a dtype
reshard or the backend cannot move or reduce (int16 moves as float16 bits,
it cannot be reduced). Tensors with a dim of size 0 move nothing and need no
plan. What runs each step is `_torch_steps.py`, its process groups
`_torch_groups.py`; docs/torch.md is the user's page.
"""

import hashlib
import inspect
import re

import torch
import torch.distributed as dist

import reshard
from reshard import _torch_steps

if "use_local_synchronization" not in inspect.signature(dist.new_group).parameters:
    raise ImportError(f"reshard.torch needs torch >= 2.1 (new_group(use_local_synchronization)); "
                      f"this is torch {torch.__version__}")

__all__ = ["clear_cache", "local_shard", "plan", "redistribute", "redistribute_local"]

_DTYPES = {
    torch.float64: "f64", torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16",
    torch.int64: "i64", torch.int32: "i32", torch.int16: "i16", torch.int8: "i8",
    torch.uint8: "u8", torch.bool: "bool",
}
_TOKEN = re.compile(r"S\((\d+)\)(?:\[(\d+)\])?|R|P\((\w+)\)")
_CACHE_LIMIT = 4096
# Request key -> _Prepared, per process.
_PREPARED = {}


class _Prepared:
    """A request made ready at this rank: the source block's shape, the step programs
    (None: nothing to run), and for DTensors the destination spec."""

    __slots__ = ("src_shape", "programs", "spec", "empty_shape")

    def __init__(self, src_shape, programs=None, empty_shape=None):
        self.src_shape, self.programs, self.empty_shape = src_shape, programs, empty_shape
        self.spec = None

    def run(self, local):
        if list(local.shape) != self.src_shape:
            raise ValueError(f"local: shape {list(local.shape)}, but the source layout gives "
                             f"this rank a block of {self.src_shape}")
        if self.empty_shape is not None:  # a tensor without elements moves nothing
            return local.new_empty(self.empty_shape)
        return local if self.programs is None else _torch_steps.run(local, self.programs)


def clear_cache():
    """Forgets prepared requests (plans and step programs; process groups stay)."""
    _PREPARED.clear()


def _dtype_name(dtype):
    name = _DTYPES.get(dtype)
    if name is None:
        raise TypeError(f"dtype: {dtype} is not supported (reshard moves "
                        f"{', '.join(str(d) for d in _DTYPES)})")
    return name


def _remember(key, prepared):
    if len(_PREPARED) >= _CACHE_LIMIT:
        _PREPARED.clear()
    _PREPARED[key] = prepared
    return prepared


def _canonical(mesh, shape, layout):
    """The layout as the planner states it: every Shard of a multiply-sharded dim with [k]."""
    surrogate = [max(int(s), 1) for s in shape]  # a dim of size 0 splits like any other
    return reshard.plan(mesh=list(mesh), shape=surrogate, src=layout, dst=layout).states[0]


def _block_shape(mesh, shape, state, coordinate):
    """The shape of the block at `coordinate` (dims of size 0 stay 0)."""
    surrogate = tuple(max(int(s), 1) for s in shape)
    box = _torch_steps.block(tuple(mesh), surrogate, state, tuple(coordinate))
    return [0 if s == 0 else size for s, (_, size) in zip(shape, box)]


def _agree(mesh, text, fits, device):
    """Every rank of the mesh asked for `text` and holds a source block of the right shape
    (`fits`): otherwise a ValueError on every rank, naming who differs. Ranks that went on
    with different requests would die or hang inside the backend."""
    coords = mesh.members(tuple(range(len(mesh.shape))))
    if len(coords) < 2:
        return
    group = mesh.group(coords)
    digest = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little") >> 1
    mine = torch.tensor([digest, int(fits)], dtype=torch.int64, device=device)
    everyone = mine.new_empty(2 * len(coords))
    _torch_steps.ALL_GATHER(everyone, mine, group=group.pg)
    by_rank = everyone.view(-1, 2).tolist()
    rows = [by_rank[r] for r in group.ranks]  # by member
    if any(d != digest for d, _ in rows):
        texts = [None] * len(coords)
        dist.all_gather_object(texts, text, group=group.pg)
        asked = {}
        for r, c in zip(group.ranks, coords):
            asked.setdefault(texts[r], []).append(list(c))
        raise ValueError("reshard.torch: the ranks of the mesh asked for different "
                         "redistributions (each must make the same call); " + "; ".join(
                             f"coordinates {cs} asked {t}" for t, cs in asked.items()))
    wrong = [list(c) for (_, ok), c in zip(rows, coords) if not ok]
    if wrong:
        raise ValueError(f"src: the local tensors at coordinates {wrong} do not have the shape "
                         "the source layout gives them")


def _prepare(mesh, shape, src, dst, dtype, options, local):
    """Plans src -> dst at this rank of `mesh`, once every rank has agreed on the request,
    and compiles this rank's steps."""
    error, src_shape = None, None
    try:  # raised after the exchange, so that no rank is left waiting in it
        src_shape = _block_shape(mesh.shape, shape, _canonical(mesh.shape, shape, src),
                                 mesh.coordinate)
    except (ValueError, reshard.NoPlanError) as e:
        error = e
    fits = error is not None or list(local.shape) == src_shape
    _agree(mesh, repr((mesh.shape, mesh.global_ranks, list(shape), src, dst, str(dtype),
                       sorted(options.items()))), fits, local.device)
    if error is not None:
        raise error
    if any(int(s) == 0 for s in shape):  # no element moves: no plan
        dst_state = _canonical(mesh.shape, shape, dst)
        return _Prepared(src_shape, empty_shape=_block_shape(mesh.shape, shape, dst_state,
                                                             mesh.coordinate))
    p = reshard.plan(mesh=list(mesh.shape), shape=list(shape), src=src, dst=dst,
                     dtype=_dtype_name(dtype), **options)
    return _Prepared(src_shape, _torch_steps.compile_steps(mesh, shape, p.states, p.steps, dtype))


# --- DTensors ---------------------------------------------------------------------------------


def _torch_placements(state):
    """Torch placements and shard order of a canonical state text ("S(0)[1]S(0)[0]P(sum)")."""
    from torch.distributed.tensor import Partial, Replicate, Shard
    from torch.distributed.tensor._dtensor_spec import ShardOrderEntry

    placements, orders = [], {}
    for m, token in enumerate(_TOKEN.finditer(state)):
        dim, position, op = token.groups()
        if dim is not None:
            placements.append(Shard(int(dim)))
            orders.setdefault(int(dim), []).append((int(position or 0), m))
        elif op is not None:
            placements.append(Partial("product" if op == "prod" else op))
        else:
            placements.append(Replicate())
    order = tuple(ShardOrderEntry(tensor_dim=d, mesh_dims=tuple(m for _, m in sorted(orders[d])))
                  for d in sorted(orders))
    return tuple(placements), order


def _source(spec):
    """The notation of a DTensorSpec's layout; refuses what reshard cannot express."""
    from torch.distributed.tensor.placement_types import _StridedShard

    strided = any(isinstance(p, _StridedShard) for p in spec.placements)
    if strided and not spec.use_strided_shard_as_shard_order:
        raise ValueError(f"src: {spec.placements} holds a _StridedShard that is a strided "
                         "layout, not a shard order (use_strided_shard_as_shard_order=False); "
                         "reshard plans shard orders only: use DTensor.redistribute")
    for p in spec.placements:
        if "MaskPartial" in type(p).__name__:
            raise ValueError(f"src: {p!r} (a masked Partial of an embedding lookup) is not "
                             "supported: reduce it with DTensor.redistribute first")
    return reshard.notation(spec.placements, None if strided else spec.shard_order, field="src")


def _destination(spec, placements, dst_state):
    """The DTensorSpec of the result: _StridedShard placements as given, else the
    destination's placements with its shard order."""
    from torch.distributed.tensor._dtensor_spec import DTensorSpec
    from torch.distributed.tensor.placement_types import _StridedShard

    if not isinstance(placements, str) and any(isinstance(p, _StridedShard) for p in placements):
        ndim = len(spec.tensor_meta.shape)
        given = tuple(_StridedShard(p.dim % ndim, split_factor=p.split_factor)
                      if isinstance(p, _StridedShard) else p for p in placements)
        normal = _torch_placements(dst_state)[0]
        given = tuple(g if isinstance(g, _StridedShard) else n for g, n in zip(given, normal))
        return DTensorSpec(spec.mesh, given, tensor_meta=spec.tensor_meta)
    placements, order = _torch_placements(dst_state)
    return DTensorSpec(spec.mesh, placements, tensor_meta=spec.tensor_meta, shard_order=order)


def _mesh_of(device_mesh):
    coordinate = device_mesh.get_coordinate()
    groups = [device_mesh.get_group(d) for d in range(device_mesh.ndim)]
    return _torch_steps.Mesh(device_mesh.shape, coordinate or [0] * device_mesh.ndim,
                             device_mesh.mesh.flatten().tolist(), groups,
                             dist.get_backend(groups[0]))


def _request(spec, mode, options):
    options = dict(options, mode=mode)
    if "devices_per_host" not in options:  # as DTensor's cost model counts them
        module = getattr(torch, spec.mesh.device_type, None)
        count = module.device_count() if hasattr(module, "device_count") else 1
        options["devices_per_host"] = max(int(count), 1)
    for key in ("coordinate", "dtype", "shape", "mesh", "src", "dst", "dst_mesh", "src_ranks",
                "dst_ranks"):
        if key in options:
            raise ValueError(f"{key}: taken from the DTensor; redistribute moves within its "
                             "DeviceMesh (plan moves between meshes with reshard.plan, spec §14)")
    return options


def _spec_of(dtensor_or_spec):
    spec = getattr(dtensor_or_spec, "_spec", dtensor_or_spec)
    if getattr(spec, "tensor_meta", None) is None or not hasattr(spec, "mesh"):
        raise ValueError(f"expected a DTensor or a DTensorSpec with tensor_meta, got "
                         f"{type(dtensor_or_spec).__name__}")
    return spec


def plan(dtensor_or_spec, placements, *, shard_order=None, mode="native", **options):
    """The reshard.Plan that redistribute would run, without running it (no communication).

    Logical shapes are those at coordinate 0 unless `coordinate` is given.
    """
    spec = _spec_of(dtensor_or_spec)
    coordinate = options.pop("coordinate", None)
    options = _request(spec, mode, options)
    if coordinate is not None:
        options["coordinate"] = coordinate
    return reshard.plan(mesh=list(spec.mesh.shape), shape=list(spec.tensor_meta.shape),
                        src=_source(spec), dtype=_dtype_name(spec.tensor_meta.dtype),
                        dst=reshard.notation(placements, shard_order, field="placements"),
                        **options)


def _key(part):
    """A hashable stand-in for placements, shard orders and option values."""
    if isinstance(part, (list, tuple)):
        return tuple(_key(p) for p in part)
    if isinstance(part, dict):
        return tuple(sorted((k, _key(v)) for k, v in part.items()))
    return part


def _prepare_dtensor(spec, placements, shard_order, mode, options, local):
    options = _request(spec, mode, options)
    shape = tuple(spec.tensor_meta.shape)
    src = _source(spec)
    dst = reshard.notation(placements, shard_order, field="placements")
    if spec.mesh.get_coordinate() is None:  # not part of the mesh: nothing to do, as torch
        prepared = _Prepared(list(local.shape))
    else:
        prepared = _prepare(_mesh_of(spec.mesh), shape, src, dst, spec.tensor_meta.dtype,
                            options, local)
    prepared.spec = _destination(spec, placements, _canonical(spec.mesh.shape, shape, dst))
    return prepared


def redistribute(dtensor, placements, *, shard_order=None, mode="native", **options):
    """`dtensor` laid out as `placements` (and `shard_order`), a DTensor on the same mesh."""
    from torch.distributed.tensor import DTensor

    if not isinstance(dtensor, DTensor):
        raise ValueError(f"dtensor: expected a DTensor, got {type(dtensor).__name__} (use "
                         "redistribute_local for a plain local tensor)")
    if dtensor.requires_grad and torch.is_grad_enabled():
        raise ValueError("dtensor: requires grad, and reshard.torch.redistribute is not "
                         "differentiable; call it under torch.no_grad() or on dtensor.detach(), "
                         "or use DTensor.redistribute")
    spec, local = dtensor._spec, dtensor._local_tensor
    key = (spec, mode, _key(placements), _key(shard_order), _key(options))
    prepared = _PREPARED.get(key)
    if prepared is None:
        prepared = _remember(key, _prepare_dtensor(spec, placements, shard_order, mode, options,
                                                   local))
    return DTensor(prepared.run(local), prepared.spec, requires_grad=False)


# --- Local tensors ----------------------------------------------------------------------------


def _coordinate(mesh, rank):
    coordinate = []
    for size in reversed(mesh):
        coordinate.append(rank % size)
        rank //= size
    return tuple(reversed(coordinate))


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
    shape = tuple(full.shape)
    state = _canonical(mesh, shape, reshard.notation(src, field="src"))
    coordinate = _coordinate(mesh, rank)
    value = full
    for m, token in enumerate(_TOKEN.finditer(state)):
        if token.group(3) is not None:
            value = _split_partial(value, token.group(3), mesh[m], coordinate[m])
    if any(s == 0 for s in shape):
        return value.new_empty(_block_shape(mesh, shape, state, coordinate))
    box = _torch_steps.block(mesh, shape, state, coordinate)
    return value[_torch_steps.slices(box, [(0, s) for s in shape])].clone()


def _local_mesh(mesh, group):
    pg = group if group is not None else dist.group.WORLD
    size = dist.get_world_size(pg)
    ranks = 1
    for m in mesh:
        ranks *= m
    if size != ranks:
        raise ValueError(f"mesh: {list(mesh)} has {ranks} ranks, the process group {size}")
    global_ranks = [dist.get_global_rank(pg, r) for r in range(size)]
    return _torch_steps.Mesh(mesh, _coordinate(mesh, dist.get_rank(pg)), global_ranks, [pg],
                             dist.get_backend(pg))


def redistribute_local(local, mesh, shape, src, dst, group=None, **options):
    """This rank's local tensor of the same global tensor, laid out as `dst`.

    `options` are further request keys (mode, algorithm, cost_model,
    devices_per_host, profile, max_memory); dtype comes from `local`.
    Every rank of `group` (default: the world) must call it with the same
    arguments.
    """
    for key in ("coordinate", "dtype"):
        if key in options:
            raise ValueError(f"{key}: taken from the process group and the tensor")
    for key in ("dst_mesh", "src_ranks", "dst_ranks"):
        if key in options:
            raise ValueError(f"{key}: redistribute moves within one mesh; plan a move between "
                             "meshes with reshard.plan (spec §14)")
    mesh = tuple(int(m) for m in mesh)
    shape = tuple(int(s) for s in shape)
    src_text = reshard.notation(src, field="src")
    dst_text = reshard.notation(dst, field="dst")
    key = ("local", mesh, shape, src_text, dst_text, local.dtype, group, _key(options))
    prepared = _PREPARED.get(key)
    if prepared is None:
        prepared = _remember(key, _prepare(_local_mesh(mesh, group), shape, src_text, dst_text,
                                           local.dtype, options, local))
    return prepared.run(local)


from reshard._planner_switch import reshard_planner_enabled, stats as planner_stats, use_reshard_planner  # noqa: E402,F401
