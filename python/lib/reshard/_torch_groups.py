"""Process groups for the steps of a plan (reshard.torch; docs/planner-semantics.md §11).

A step on mesh dims G runs among the ranks that share every coordinate
outside G. Its process group is found among the groups the caller already
has (a DeviceMesh's per-dim groups, the redistribute_local group) or created
once per process and set of ranks with
`new_group(ranks, use_local_synchronization=True)`: only those ranks take
part in creating it, and each creates only the groups it is in. Members of a
step call redistribute together and meet the same steps in the same order,
so the creations pair up without involving the rest of the world (a mesh
may be part of it) and without a rank creating groups it never uses.

A group's ranks are numbered in ascending global rank (torch sorts them);
a step's members are numbered row-major over G (§11). `Group.ranks` maps
member index to group rank, so collectives address members correctly on any
DeviceMesh, including one whose rank tensor is not row-major.
"""

import torch.distributed as dist

# (default group, backend, sorted global ranks) -> ProcessGroup. The default
# group is kept so that a destroyed and re-initialised world starts afresh.
_CREATED = {}
_WORLD = [None]


class Group:
    """A step's process group and, per member (row-major over G), its group rank."""

    __slots__ = ("pg", "ranks")

    def __init__(self, pg, ranks):
        self.pg = pg
        self.ranks = ranks


def _created():
    world = dist.group.WORLD
    if _WORLD[0] is not world:
        _CREATED.clear()
        _WORLD[0] = world
    return _CREATED


def group_of(members, existing, backend):
    """The Group of the global ranks `members` (in member order).

    existing: process groups to reuse when one has exactly these ranks.
    backend: for a new group ("gloo", "nccl", "cpu:gloo,cuda:nccl", ...).
    """
    ranks = sorted(members)
    pg = None
    for candidate in existing:
        if candidate is not None and sorted(dist.get_process_group_ranks(candidate)) == ranks:
            pg = candidate
            break
    if pg is None:
        created = _created()
        key = (backend, tuple(ranks))
        pg = created.get(key)
        if pg is None:
            pg = dist.new_group(ranks=ranks, backend=backend, use_local_synchronization=True)
            created[key] = pg
    return Group(pg, [dist.get_group_rank(pg, m) for m in members])
