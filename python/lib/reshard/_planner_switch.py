"""reshard as DTensor's own planner: use_reshard_planner() (docs/planner-semantics.md §13).

    import reshard.torch
    reshard.torch.use_reshard_planner()          # on for the rest of the process
    with reshard.torch.use_reshard_planner():    # on inside the block only
        y = x.redistribute(mesh, placements)

While on, torch's `_redistribute._gen_transform_infos_non_cached`, through which
DTensor.redistribute (redistribute_local_tensor) and `redistribute_cost` (what
sharding-strategy solvers call) get their plans, answers with reshard's pytorch
mode: the same algorithm choice as torch (graph for non-default shard orders and
_StridedShard, torch's use_min_cost_redistribution_plan, else greedy), the
mesh's own devices_per_host and this rank's coordinate, and torch's own
_TransformInfo objects built from reshard's steps. torch's executor runs them
and torch's redistribute_cost prices them, which is reshard's cost
(python/tests/torch_parity_test.py checks both). Requests reshard does not take
as input (an empty tensor dim, a dtype it has no size for, Partial ops mixed
other than sum with avg, a _StridedShard it cannot decode or that stands for a
plain shard, a rank outside the mesh) go to torch's
planner and are counted in stats(); a plan torch could not run (S->P or
P(x)->P(y) on a mesh dim of size > 1) raises reshard.NoPlanError.

Only the torch release the internals were read from is accepted: when one is
missing or has another signature, switching on raises RuntimeError naming the
torch version, and nothing is patched.
"""

import contextlib
import inspect

import torch

import reshard

_DTYPES = {
    torch.float64: "f64", torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16",
    torch.int64: "i64", torch.int32: "i32", torch.int16: "i16", torch.int8: "i8",
    torch.uint8: "u8", torch.bool: "bool",
}
_SIGNATURE = ["src_spec", "dst_spec", "use_graph_based_transform"]
_stats = {"planned": 0, "by_torch": 0}
_saved = []  # torch's own function under each active switch, innermost last


def _internals():
    """torch's internals this switch uses, checked; RuntimeError naming the version otherwise."""
    try:
        from torch.distributed.device_mesh import _mesh_resources
        from torch.distributed.tensor import Partial, Replicate, Shard
        from torch.distributed.tensor import _redistribute
        from torch.distributed.tensor._dtensor_spec import DTensorSpec
        from torch.distributed.tensor.placement_types import _StridedShard
        checks = {
            "_redistribute._gen_transform_infos_non_cached": list(inspect.signature(
                _redistribute._gen_transform_infos_non_cached).parameters) == _SIGNATURE,
            "_redistribute._gen_transform_infos.cache_clear": callable(
                getattr(_redistribute._gen_transform_infos, "cache_clear", None)),
            "_redistribute._TransformInfo(mesh_dim, src_dst_placements, logical_shape)": [
                f.name for f in _redistribute._TransformInfo.__dataclass_fields__.values()] == [
                "mesh_dim", "src_dst_placements", "logical_shape"],
            "_redistribute._FORCE_MIN_COST_REDISTRIBUTION_PLAN": hasattr(
                _redistribute, "_FORCE_MIN_COST_REDISTRIBUTION_PLAN"),
            "DTensorSpec.is_default_device_order": callable(
                getattr(DTensorSpec, "is_default_device_order", None)),
            "_mesh_resources.num_devices_per_host": callable(
                getattr(_mesh_resources, "num_devices_per_host", None)),
        }
    except (ImportError, AttributeError, TypeError, ValueError) as e:
        raise RuntimeError(f"reshard.torch.use_reshard_planner: torch {torch.__version__} lacks "
                           f"the planner internals it replaces ({e}); it supports torch 2.13")
    bad = [name for name, ok in checks.items() if not ok]
    if bad:
        raise RuntimeError(f"reshard.torch.use_reshard_planner: torch {torch.__version__}'s "
                           f"{', '.join(bad)} differ from torch 2.13's, which it replaces; "
                           "nothing was switched")
    return _redistribute, DTensorSpec, _StridedShard, _mesh_resources, (Shard, Replicate, Partial)


def _placement(token, known, classes):
    """The torch placement for reshard's token: the caller's own object where it has one."""
    Shard, Replicate, _ = classes
    if token in known:
        return known[token]
    if token == "R":
        return Replicate()
    if token.startswith("S("):
        return Shard(int(token[2:-1]))
    raise ValueError(f"reshard step placement {token!r} has no torch placement")


def _request(src_spec, dst_spec, use_graph, internals):
    _redistribute, DTensorSpec, _StridedShard, _mesh_resources, _ = internals
    mesh = src_spec.mesh
    coordinate = mesh.get_coordinate()
    dtype = _DTYPES.get(src_spec.tensor_meta.dtype)
    if coordinate is None or dtype is None or 0 in src_spec.shape:
        return None
    strided = any(isinstance(p, _StridedShard) for p in src_spec.placements + dst_spec.placements)
    if strided and not all(s.use_strided_shard_as_shard_order for s in (src_spec, dst_spec)
                           if any(isinstance(p, _StridedShard) for p in s.placements)):
        return None  # a _StridedShard meant as a plain shard (view propagation): torch's case
    default = all(DTensorSpec.is_default_device_order(s.shard_order) for s in (src_spec, dst_spec))
    if strided or not default:
        use_graph = True
    elif _redistribute._FORCE_MIN_COST_REDISTRIBUTION_PLAN is not None:
        use_graph = _redistribute._FORCE_MIN_COST_REDISTRIBUTION_PLAN

    def layout(spec):
        order = None if spec.use_strided_shard_as_shard_order else spec.shard_order
        return reshard.notation(spec.placements, order)

    return {
        "mesh": list(mesh.shape), "shape": [int(s) for s in src_spec.shape], "dtype": dtype,
        "src": layout(src_spec), "dst": layout(dst_spec),
        "algorithm": "graph" if use_graph else "greedy", "mode": "pytorch",
        "cost_model": "pytorch", "coordinate": list(coordinate),
        "devices_per_host": _mesh_resources.num_devices_per_host(mesh.device_type),
    }


def _planner(torch_planner, internals):
    _redistribute = internals[0]
    classes = internals[4]

    def gen_transform_infos_non_cached(src_spec, dst_spec, use_graph_based_transform=None):
        try:
            request = _request(src_spec, dst_spec, use_graph_based_transform, internals)
            plan = reshard.plan(**request) if request is not None else None
        except ValueError:  # an input reshard does not take
            plan = None
        if plan is None:
            _stats["by_torch"] += 1
            return torch_planner(src_spec, dst_spec, use_graph_based_transform)
        known = {reshard.notation([p]): p for p in src_spec.placements + dst_spec.placements}
        _stats["planned"] += 1
        return [_redistribute._TransformInfo(
            mesh_dim=s.mesh_dim,
            src_dst_placements=(_placement(s.src, known, classes),
                                _placement(s.dst, known, classes)),
            logical_shape=list(s.logical_shape)) for s in plan.steps]

    gen_transform_infos_non_cached.reshard_planner = True
    return gen_transform_infos_non_cached


class use_reshard_planner(contextlib.AbstractContextManager):
    """Switches DTensor's planner to reshard's pytorch mode now; a `with` block switches it back."""

    def __init__(self):
        internals = _internals()
        _redistribute = internals[0]
        current = _redistribute._gen_transform_infos_non_cached
        torch_planner = current if not getattr(current, "reshard_planner", False) else _saved[0]
        _saved.append(current)
        _redistribute._gen_transform_infos_non_cached = _planner(torch_planner, internals)
        _redistribute._gen_transform_infos.cache_clear()  # plans made before the switch
        self._redistribute = _redistribute

    def __exit__(self, *exc):
        self._redistribute._gen_transform_infos_non_cached = _saved.pop()
        self._redistribute._gen_transform_infos.cache_clear()
        return None


def reshard_planner_enabled():
    """True while DTensor plans with reshard."""
    from torch.distributed.tensor import _redistribute
    return getattr(_redistribute._gen_transform_infos_non_cached, "reshard_planner", False)


def stats():
    """Plans made by reshard, and requests handed to torch's planner, in this process."""
    return dict(_stats)
