"""Plan and Step: a `reshard batch` result object, read by attribute.

Plan.to_dict() is exactly the object `reshard batch` prints for the same
request (id, ok, algorithm, cost, trace, steps, mode, peak_bytes); each Step
carries its JSON fields (mesh_dim, src, dst, collective, logical_shape, cost,
and for native group steps mesh_dims and order, for permutes mesh_dims and
moves; docs/planner-semantics.md §4.2, §10).
"""

import json


class Step:
    """One step of a plan; attributes are the step object's fields."""

    __slots__ = ("_fields", "mesh_dim", "src", "dst", "collective", "logical_shape", "cost",
                 "mesh_dims", "order", "moves")

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

    def to_dict(self):
        return json.loads(json.dumps(self._fields))

    def __repr__(self):
        dims = "mesh dim %d" % self.mesh_dim if len(self.mesh_dims) == 1 and not self.moves \
            else "mesh dims %s" % self.mesh_dims
        return "Step(%s %s->%s on %s, logical_shape=%s, cost=%r)" % (
            self.collective, self.src, self.dst, dims, self.logical_shape, self.cost)


class Plan:
    """A plan: trace, cost, algorithm, mode, peak_bytes, steps, states."""

    __slots__ = ("_fields", "id", "trace", "cost", "algorithm", "mode", "peak_bytes", "steps",
                 "states")

    @classmethod
    def _from_json(cls, text, states):
        self = cls.__new__(cls)
        self._fields = json.loads(text)
        f = self._fields
        self.id = f["id"]
        self.trace = f["trace"]
        self.cost = f["cost"]
        self.algorithm = f["algorithm"]
        self.mode = f["mode"]
        self.peak_bytes = f["peak_bytes"]
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
