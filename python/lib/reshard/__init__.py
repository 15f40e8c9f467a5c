"""reshard for Python: plan tensor redistributions on N-D device meshes.

    import reshard
    p = reshard.plan(mesh=[2, 2], shape=[8, 8], src="S(0)S(1)", dst="RR")
    p.cost, p.trace, p.steps[0].collective
    reshard.cost(mesh=[2, 2], shape=[8, 8], src="S(0)R", dst="RS(0)")  # cached
    reshard.cost_matrix(["S(0)R", "RS(1)", "RR"], mesh=[2, 2], shape=[8, 8])

Requests are the keys of a `reshard batch` line as keyword arguments (mesh,
shape, src, dst, dtype, mode, algorithm, cost_model, profile,
devices_per_host, coordinate, max_memory; id and expected are accepted as
batch lines accept them), plus max_states, the bound `reshard batch` takes as
--max-states (default 1000000). The C++ library reads and validates them exactly as
`reshard batch` does, so answers and error messages are the CLI's.

src, dst and layouts are the notation of docs/planner-semantics.md §3
("S(0)[1]S(0)[0]R") or PyTorch-style placements read by attribute
(placements.py): a list such as [Shard(0), Replicate()], or any object with
.placements and optionally .shard_order (a DTensorSpec, or reshard.Layout).

Errors: ValueError naming the field and value; NoPlanError when no plan
exists or a limit (max_memory, the search bound) is hit, with the reason.
The GIL is released while the C++ library validates and plans.

A move between meshes (docs/planner-semantics.md §14) adds dst_mesh,
src_ranks and dst_ranks (global ranks, row-major over each mesh): plan()
then returns a CrossMeshPlan and cost() its cost:

    reshard.plan(mesh=[4, 2], shape=[4096, 1024], src="S(0)S(1)",
                 dst_mesh=[2], dst_ranks=[8, 9], dst="S(1)")
"""

import json

from reshard import _reshard
from reshard._reshard import NoPlanError

NoPlanError.__module__ = "reshard"
from reshard.placements import Layout, Partial, Replicate, Shard, _StridedShard, notation
from reshard.plan import CrossMeshPlan, Plan, Step

__all__ = [
    "CrossMeshPlan",
    "Layout",
    "NoPlanError",
    "Partial",
    "Plan",
    "Replicate",
    "Shard",
    "Step",
    "_StridedShard",
    "clear_cache",
    "cost",
    "cost_matrix",
    "notation",
    "plan",
]

# reshard.cost's answers by request, keyed by repr(request). Only requests
# whose src and dst are text and that name no profile file (it may change on
# disk) are cached here. Every value the C++ reader accepts (str, int, float,
# bool, None, lists and tuples of them, integers by __index__ such as numpy's)
# has a repr that spells its value and type (True is not 1, [4] is not (4,)
# or [4.0]), so equal keys are equal requests and a hit is the answer the C++
# library would give; a value with an uninformative repr (an object at an
# address) is refused by the reader, so no answer is ever stored under it.
# Everything else goes to the C++ plan cache every time.
_COST_CACHE = {}
_COST_CACHE_LIMIT = 1 << 16


def _cost_key(request):
    if type(request.get("src")) is not str or type(request.get("dst")) is not str:
        return None
    if "profile" in request:
        return None
    if any(getattr(v, "ndim", 0) for v in request.values()):
        return None  # an array's repr may elide its values
    return repr(request)


def _with_notation(request):
    """The request with src and dst given as notation text."""
    for field in ("src", "dst"):
        value = request.get(field)
        if value is not None and not isinstance(value, str):
            request = dict(request)
            request[field] = notation(value, field=field)
    return request


def plan(**request):
    """Plans one redistribution; a Plan, or a CrossMeshPlan for a move between
    meshes (to_dict() is the `reshard batch` object either way)."""
    text, states = _reshard.plan(_with_notation(request))
    fields = json.loads(text)
    if fields.get("cross_mesh"):
        return CrossMeshPlan._from_fields(fields)
    return Plan._from_fields(fields, states)


def cost(**request):
    """The plan's cost, cached: a drop-in for a redistribute_cost query."""
    key = _cost_key(request)
    if key is not None:
        value = _COST_CACHE.get(key)
        if value is not None:
            return value
    value = _reshard.cost(_with_notation(request))
    if key is not None:
        if len(_COST_CACHE) >= _COST_CACHE_LIMIT:
            _COST_CACHE.clear()
        _COST_CACHE[key] = value
    return value


def clear_cache():
    """Forgets the costs cached in Python (the C++ plan cache keeps its plans)."""
    _COST_CACHE.clear()


def cache_stats():
    """Hits, misses and size of the C++ plan cache, and the Python cost cache's size."""
    stats = _reshard.cache_stats()
    stats["python_costs"] = len(_COST_CACHE)
    return stats


def cost_matrix(layouts, **request):
    """Graph-plan costs between every pair of layouts (planner/cost_matrix.h).

    Entry [i][j] is plan(src=layouts[i], dst=layouts[j], algorithm="graph",
    **request).cost. A numpy float64 array with inf where no plan exists if
    numpy is importable, else a list of lists with None there. Computed in
    C++ on one thread per core this process may run on (at most 16), the GIL
    released.
    """
    for field in ("src", "dst"):
        if field in request:
            raise ValueError(f"{field}: cost_matrix takes layouts, not {field}")
    if request.get("algorithm", "graph") != "graph":
        raise ValueError(
            f"algorithm: cost_matrix prices graph plans only, got {request['algorithm']!r}"
            " (leave algorithm out or give 'graph')")
    for field in ("coordinate", "max_memory"):
        if request.get(field) is not None:
            raise ValueError(f"{field}: not supported by cost_matrix (plan pairs one by one)")
    texts = [notation(layout, field=f"layouts[{i}]") for i, layout in enumerate(layouts)]
    if texts:
        request = dict(request, src=texts[0], dst=texts[0])
        rows = _reshard.cost_matrix(request, texts)
    else:
        rows = []
    try:
        import numpy
    except ImportError:
        return rows
    matrix = numpy.full((len(rows), len(rows)), numpy.inf)
    for i, row in enumerate(rows):
        for j, value in enumerate(row):
            if value is not None:
                matrix[i, j] = value
    return matrix
