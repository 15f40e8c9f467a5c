"""Plan, CrossMeshPlan and Step: a `reshard batch` result object, read by attribute.

Plan.to_dict() is exactly the object `reshard batch` prints for the same
request (id, ok, algorithm, cost, trace, steps, mode, peak_bytes, cost_model, and
not_optimal when a limit stopped the search); each Step
carries its JSON fields (mesh_dim, src, dst, collective, logical_shape, cost,
and for native group steps mesh_dims and order, for permutes mesh_dims and
moves, and staging where one is staged over rails; docs/planner-semantics.md
§4.2, §10, §11.2). CrossMeshPlan is the object batch
prints for a move between meshes (§14: dst_mesh, src_ranks, dst_ranks).
"""

import json


class Step:
    """One step of a plan; attributes are the step object's fields."""

    __slots__ = ("_fields", "mesh_dim", "src", "dst", "collective", "logical_shape", "cost",
                 "mesh_dims", "order", "moves", "staging")

    def __init__(self, fields):
        self._fields = fields
        self.mesh_dim = fields["mesh_dim"]
        self.src = fields["src"]
        self.dst = fields["dst"]
        self.collective = fields["collective"]
        self.logical_shape = fields["logical_shape"]
        self.cost = fields["cost"]
        # A one-mesh-dim step has neither key; mesh_dims is then [mesh_dim].
        self.mesh_dims = fields.get("mesh_dims", [self.mesh_dim])
        self.order = fields.get("order")
        self.moves = fields.get("moves")
        # A permute or exchange staged over rails (§11.2): {"rails_per_host", "chunks"}.
        self.staging = fields.get("staging")

    def to_dict(self):
        return json.loads(json.dumps(self._fields))

    def __repr__(self):
        dims = "mesh dim %d" % self.mesh_dim if len(self.mesh_dims) == 1 and not self.moves \
            else "mesh dims %s" % self.mesh_dims
        return "Step(%s %s->%s on %s, logical_shape=%s, cost=%r)" % (
            self.collective, self.src, self.dst, dims, self.logical_shape, self.cost)


class Plan:
    """A plan: trace, cost, algorithm, mode, peak_bytes, cost_model, steps, states, not_optimal."""

    __slots__ = ("_fields", "id", "trace", "cost", "algorithm", "mode", "peak_bytes",
                 "cost_model", "steps", "states", "not_optimal")

    @classmethod
    def _from_fields(cls, fields, states):
        self = cls.__new__(cls)
        self._fields = fields
        f = fields
        self.id = f["id"]
        self.trace = f["trace"]
        self.cost = f["cost"]
        self.algorithm = f["algorithm"]
        self.mode = f["mode"]
        self.peak_bytes = f["peak_bytes"]
        # The model that priced it: its fingerprint (name, profile, parameters).
        self.cost_model = f["cost_model"]
        # "" for a cheapest plan; otherwise the limit that stopped native mode's
        # search before it proved one (spec §5.2 item 9): the plan is the cheapest
        # found, never costlier than pytorch mode's.
        self.not_optimal = f.get("not_optimal", "")
        self.steps = [Step(s) for s in f["steps"]]
        # The states the data goes through (§10): states[i] -> steps[i] -> states[i + 1].
        # For greedy plans the trace may print other shard orders (§8); these are real.
        self.states = list(states)
        return self

    def to_dict(self):
        """The `reshard batch` result object for this request (a fresh copy)."""
        return json.loads(json.dumps(self._fields))

    def __repr__(self):
        lines = ["Plan(%s, cost=%r, algorithm=%s, mode=%s, peak_bytes=%d, %d steps)" % (
            self.trace, self.cost, self.algorithm, self.mode, self.peak_bytes, len(self.steps))]
        lines += ["  %d. %r" % (i, s) for i, s in enumerate(self.steps)]
        return "\n".join(lines)


class CrossMeshPlan:
    """A move between meshes (§14): steps before on the source mesh, the
    crossing (one exchange over both rank sets), steps after on the
    destination mesh. cost is None where the model prices no exchange."""

    __slots__ = ("_fields", "id", "cost", "mode", "peak_bytes", "cost_model", "src_mesh",
                 "dst_mesh", "src_ranks", "dst_ranks", "before", "crossing", "after")

    @classmethod
    def _from_fields(cls, fields):
        self = cls.__new__(cls)
        self._fields = fields
        f = fields
        for key in ("id", "cost", "mode", "peak_bytes", "cost_model", "src_mesh", "dst_mesh",
                    "src_ranks", "dst_ranks"):
            setattr(self, key, f[key])
        self.before = [Step(s) for s in f["before"]]
        self.after = [Step(s) for s in f["after"]]
        # src and dst layouts, cost, participants, slices, rounds (more than
        # one under max_memory, relayed or spread over rails), rounds_for
        # (None, "memory", "relaying" or "rails": the §14 section), pairs
        # [{src, dst, bytes}] by global rank, bytes_sent, max_bytes_sent,
        # receive_lower_bound_max.
        self.crossing = f["crossing"]
        return self

    def to_dict(self):
        """The `reshard batch` result object for this request (a fresh copy)."""
        return json.loads(json.dumps(self._fields))

    def __repr__(self):
        c = self.crossing
        lines = ["CrossMeshPlan(%s on %s ranks %s -> %s on %s ranks %s, cost=%r, mode=%s)" % (
            c["src"], self.src_mesh, self.src_ranks, c["dst"], self.dst_mesh, self.dst_ranks,
            self.cost, self.mode)]
        lines += ["  before %d. %r" % (i, s) for i, s in enumerate(self.before)]
        lines.append("  crossing: %d pairs in %d round(s), %d bytes sent, at most %d by one rank" % (
            len(c["pairs"]), c["rounds"], c["bytes_sent"], c["max_bytes_sent"]))
        lines += ["  after %d. %r" % (i, s) for i, s in enumerate(self.after)]
        return "\n".join(lines)
