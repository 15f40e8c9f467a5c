"""PyTorch-style placements and their notation (docs/planner-semantics.md §1-§3, §7).

A layout is one placement per mesh dim plus, optionally, a shard order: for
each tensor dim sharded on two or more mesh dims, the mesh dims in the order
their splits apply (§2; default ascending). Placements are read by
attribute, so PyTorch's own objects work as well as these:

    placement                           notation
    Shard(dim)          .dim            S(dim)
    Replicate()                         R
    Partial(reduce_op)  .reduce_op      P(op): "sum", "avg", "max", "min", "prod"
                                        (a c10d ReduceOp: SUM, AVG, MAX, MIN, PRODUCT)
    _StridedShard(dim, split_factor)    _S(dim, split_factor) (§7)
      .dim, .split_factor
    a str token                         itself ("S(0)", "R", "P(max)")

    shard order: entries (tensor_dim, mesh_dims) or objects with .tensor_dim
    and .mesh_dims (PyTorch's ShardOrderEntry); mesh dim m at position k of
    tensor dim d's order prints as S(d)[k].

notation([Shard(0), Shard(0)], shard_order=[(0, [1, 0])]) == "S(0)[1]S(0)[0]".
"""

import dataclasses


@dataclasses.dataclass(frozen=True)
class Shard:
    dim: int


@dataclasses.dataclass(frozen=True)
class Replicate:
    pass


@dataclasses.dataclass(frozen=True)
class Partial:
    reduce_op: str = "sum"


@dataclasses.dataclass(frozen=True)
class _StridedShard:
    dim: int
    split_factor: int


@dataclasses.dataclass(frozen=True)
class Layout:
    """Placements and a shard order, as a DTensorSpec holds them."""

    placements: tuple
    shard_order: tuple = ()

    def __str__(self):
        return notation(self)


_OPS = {"sum": "sum", "avg": "avg", "max": "max", "min": "min", "prod": "prod",
        "product": "prod", "average": "avg"}


def _reduce_op(op, field):
    kind = getattr(op, "op", op)  # torch 1.13's c10d ReduceOp holds a RedOpType in .op
    name = kind if isinstance(kind, str) else getattr(kind, "name", None) or str(kind)
    name = str(name).rsplit(".", 1)[-1].strip("<>").split(":")[0].lower()
    if name not in _OPS:
        raise ValueError(f"{field}: unknown reduce op {op!r} (known: sum, avg, max, min, prod)")
    return _OPS[name]


def _token(p, field):
    """One placement's token without an order suffix, and its Shard dim (or None)."""
    if isinstance(p, str):
        return p, None
    split_factor = getattr(p, "split_factor", None)
    dim = getattr(p, "dim", None)
    if split_factor is not None and dim is not None:
        return f"_S({int(dim)}, {int(split_factor)})", None
    if dim is not None:
        return f"S({int(dim)})", int(dim)
    if hasattr(p, "reduce_op"):
        return f"P({_reduce_op(p.reduce_op, field)})", None
    if "Replicate" in type(p).__name__ or getattr(p, "is_replicate", lambda: False)():
        return "R", None
    raise ValueError(f"{field}: {p!r} is not a placement (Shard, Replicate, Partial, "
                     "_StridedShard or a notation token)")


def _order_entries(shard_order, field):
    """{tensor_dim: [mesh dims]} from (tensor_dim, mesh_dims) pairs or entry objects."""
    orders = {}
    for entry in shard_order or ():
        if hasattr(entry, "tensor_dim"):
            tensor_dim, mesh_dims = entry.tensor_dim, entry.mesh_dims
        else:
            try:
                tensor_dim, mesh_dims = entry
            except (TypeError, ValueError):
                raise ValueError(f"{field}: shard order entry {entry!r} is not "
                                 "(tensor_dim, mesh_dims)") from None
        orders[int(tensor_dim)] = [int(m) for m in mesh_dims]
    return orders


def notation(layout, shard_order=None, field="layout"):
    """The §3 notation of a layout: text, a placement list, or an object with .placements."""
    if isinstance(layout, str):
        return layout
    if isinstance(layout, (bytes, bytearray, memoryview)):
        # Iterating bytes gives integers, which would read as placements.
        raise ValueError(f"{field}: got bytes {bytes(layout)[:40]!r}; notation is text "
                         "(decode it, e.g. .decode())")
    if hasattr(layout, "placements"):
        if shard_order is None:
            shard_order = getattr(layout, "shard_order", None)
        layout = layout.placements
    try:
        placements = list(layout)
    except TypeError:
        raise ValueError(f"{field}: expected notation text or a list of placements, "
                         f"got {layout!r}") from None
    tokens, dims = zip(*[_token(p, field) for p in placements]) if placements else ((), ())
    tokens = list(tokens)
    for tensor_dim, mesh_dims in _order_entries(shard_order, field).items():
        if len(mesh_dims) < 2:
            continue  # one mesh dim: no suffix (§3)
        holders = [m for m, d in enumerate(dims) if d == tensor_dim]
        if sorted(mesh_dims) != holders:
            raise ValueError(f"{field}: shard order of tensor dim {tensor_dim} lists mesh dims "
                             f"{mesh_dims}, but mesh dims {holders} hold Shard({tensor_dim})")
        for position, m in enumerate(mesh_dims):
            tokens[m] = f"{tokens[m]}[{position}]"
    return "".join(tokens)
