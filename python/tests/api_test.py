"""The Python API: Plan objects, errors, placements, the cost cache, cost_matrix, the GIL."""

import sys
import threading
import unittest

import reshard
from reshard import Layout, Partial, Replicate, Shard, _StridedShard

# docs/planner-semantics.md §3's example on mesh (2, 2, 2): the oracle's answer
# (tests/testdata/pytorch-tests.jsonl, pytorch-idx1).
IDX1 = dict(mesh=[2, 2, 2], shape=[8, 8, 8], dtype="f32", src="S(0)[1]S(0)[0]S(0)[2]",
            dst="RS(0)[0]S(0)[1]", algorithm="graph", cost_model="pytorch", devices_per_host=8)


class PlanObject(unittest.TestCase):
    def test_attributes_are_the_batch_fields(self):
        p = reshard.plan(**IDX1)
        self.assertEqual(p.trace, "S(0)[1]S(0)[0]S(0)[2]->S(0)[1]S(0)[0]R->RS(0)R->RS(0)[0]S(0)[1]")
        self.assertEqual((p.algorithm, p.mode), ("graph", "pytorch"))
        self.assertAlmostEqual(p.cost, 14.408155709661397, places=12)
        self.assertEqual([s.collective for s in p.steps], ["all_gather", "all_gather", "chunk"])
        self.assertEqual(p.steps[0].logical_shape, [2, 8, 8])
        self.assertEqual(p.steps[0].mesh_dims, [2])
        self.assertEqual(p.to_dict()["steps"][1], {
            "mesh_dim": 0, "src": "S(0)", "dst": "R", "collective": "all_gather",
            "logical_shape": [4, 8, 8], "cost": 7.205437139774265})
        self.assertEqual(list(p.to_dict()), ["id", "ok", "algorithm", "cost", "trace", "steps",
                                             "mode", "peak_bytes", "cost_model"])
        self.assertEqual(p.cost_model, "pytorch devices_per_host=8")
        self.assertEqual(len(p.states), len(p.steps) + 1)

    def test_a_stopped_native_search_returns_a_plan_and_says_so(self):
        # Spec §5.2 item 9 (issue 44): pytorch mode's plan is the incumbent, so a
        # limit gives the cheapest plan found, never "no plan"; not_optimal names it.
        case = dict(mesh=[2] * 5, shape=[16] * 5, src="P(sum)" * 5, dst="R" * 5)
        stopped = reshard.plan(**case, max_edges=10)
        self.assertEqual(stopped.mode, "native")
        self.assertIn("max_search_edges (10)", stopped.not_optimal)
        self.assertEqual(stopped.to_dict()["not_optimal"], stopped.not_optimal)
        self.assertEqual(reshard.plan(**IDX1).not_optimal, "")

    def test_repr_shows_trace_and_steps(self):
        text = repr(reshard.plan(**IDX1))
        self.assertIn("S(0)[1]S(0)[0]S(0)[2]->", text)
        self.assertIn("all_gather S(0)->R on mesh dim 2", text)

    def test_native_group_step_fields(self):
        # alpha-beta plans this transpose as one permute (nccl as a group gather + chunks).
        p = reshard.plan(mesh=[2, 2], shape=[13, 5], src="S(0)S(0)", dst="S(1)S(1)",
                         cost_model="alpha-beta")
        permutes = [s for s in p.steps if s.collective == "permute"]
        self.assertTrue(permutes, p)
        self.assertEqual(permutes[0].mesh_dims, [0, 1])
        self.assertTrue(all("dst" in m for m in permutes[0].moves))

    def test_a_step_staged_over_rails_carries_its_staging(self):
        # Issue 43's C2 on 8 hosts of 8 (spec §11.2): one permute staged over rails.
        p = reshard.plan(mesh=[8, 8], shape=[4096, 4096], dtype="bf16", src="S(0)[1]S(0)[0]",
                         dst="S(0)S(0)")
        self.assertEqual([s.collective for s in p.steps], ["permute"], p)
        self.assertEqual(p.steps[0].staging, {"rails_per_host": 8, "chunks": 1})
        self.assertEqual(p.to_dict()["steps"][0]["staging"], p.steps[0].staging)
        direct = reshard.plan(mesh=[2, 2], shape=[13, 5], src="S(0)S(0)", dst="S(1)S(1)",
                              cost_model="alpha-beta")
        self.assertTrue(all(s.staging is None for s in direct.steps))

    def test_id_is_echoed_like_batch(self):
        self.assertEqual(reshard.plan(id="a", **IDX1).to_dict()["id"], "a")


class Errors(unittest.TestCase):
    def assert_value_error(self, fragment, **request):
        with self.assertRaises(ValueError) as e:
            reshard.plan(**request)
        self.assertIn(fragment, str(e.exception))

    def test_bad_values_name_their_field_and_value(self):
        base = dict(mesh=[2, 2], shape=[8, 8], src="S(0)R", dst="RR")
        self.assert_value_error('src: state "S(0)X"', **dict(base, src="S(0)X"))
        self.assert_value_error("mesh: expected a list of integers, got [2,true]",
                                **dict(base, mesh=[2, True]))
        self.assert_value_error("shape: expected a list of integers", **dict(base, shape="8,8"))
        self.assert_value_error('cost_model: unknown cost model "fast"',
                                **dict(base, cost_model="fast"))
        self.assert_value_error("max_memory: must be a positive number of bytes, got 0",
                                **dict(base, max_memory=0))
        self.assert_value_error("dtype:", **dict(base, dtype="f128"))
        self.assert_value_error('unknown key "colour"', **dict(base, colour="red"))
        self.assert_value_error('missing key "dst"', mesh=[2], shape=[4], src="R")
        self.assert_value_error("mesh: ", **dict(base, mesh=[2, 1 << 70]))
        self.assert_value_error("mesh: unsupported value", **dict(base, mesh=[2, object()]))

    def test_bytes_notation_and_nan_ids_are_refused(self):
        base = dict(mesh=[2, 2], shape=[8, 8], src="S(0)S(1)", dst="RR")
        # Not read as the integers of its bytes: refused, saying to decode.
        self.assert_value_error("src: got bytes b'S(0)S(1)'", **dict(base, src=b"S(0)S(1)"))
        self.assert_value_error("id: nan is not a finite number", **dict(base, id=float("nan")))
        self.assert_value_error("id: inf is not a finite number", **dict(base, id=float("inf")))

    def test_one_dimensional_integer_arrays_are_lists(self):
        try:
            import numpy as np
        except ImportError:
            self.skipTest("numpy is not installed")
        base = dict(src="S(0)S(1)", dst="RR")
        listed = reshard.plan(mesh=[2, 2], shape=[8, 8], **base)
        arrays = reshard.plan(mesh=np.array([2, 2]), shape=np.array([8, 8], dtype=np.uint32), **base)
        self.assertEqual(arrays.to_dict(), listed.to_dict())
        self.assertEqual(reshard.cost(mesh=np.array([2, 2]), shape=np.array([8, 8]), **base),
                         listed.cost)
        # 2-D and float arrays are not shapes.
        self.assert_value_error("shape: ", mesh=[2, 2], shape=np.array([[8, 8]]), **base)
        self.assert_value_error("shape: ", mesh=[2, 2], shape=np.array([8.0, 8.0]), **base)

    def test_no_plan_carries_the_reason(self):
        with self.assertRaises(reshard.NoPlanError) as e:
            reshard.plan(mesh=[2], shape=[8], src="S(0)", dst="P(sum)", mode="pytorch",
                         algorithm="greedy")
        self.assertTrue(str(e.exception).startswith("no_path:"), str(e.exception))
        with self.assertRaises(reshard.NoPlanError) as e:
            reshard.plan(mesh=[2, 2], shape=[64, 64], src="S(0)S(1)", dst="RR", max_memory=100)
        self.assertRegex(str(e.exception), r"max[ _]memory")
        with self.assertRaises(reshard.NoPlanError):
            reshard.cost(mesh=[2], shape=[8], src="S(0)", dst="P(sum)", mode="pytorch",
                         algorithm="greedy")

    def test_errors_are_not_cached_as_answers(self):
        bad = dict(mesh=[2], shape=[8], src="S(0)", dst="Q")
        for _ in range(2):
            with self.assertRaises(ValueError):
                reshard.cost(**bad)


class Placements(unittest.TestCase):
    def test_objects_map_to_notation(self):
        self.assertEqual(reshard.notation([Shard(0), Replicate(), Partial("avg")]), "S(0)RP(avg)")
        self.assertEqual(reshard.notation([_StridedShard(0, 2), Shard(0)]), "_S(0, 2)S(0)")
        self.assertEqual(reshard.notation(Layout((Shard(0), Shard(0)), ((0, (1, 0)),))),
                         "S(0)[1]S(0)[0]")

    def test_objects_plan_like_their_notation(self):
        text = reshard.plan(**IDX1)
        objects = reshard.plan(**dict(
            IDX1, src=Layout((Shard(0),) * 3, ((0, (1, 0, 2)),)),
            dst=Layout((Replicate(), Shard(0), Shard(0)), ((0, (1, 2)),))))
        self.assertEqual(objects.to_dict(), text.to_dict())

    def test_strided_shard_decodes_to_a_shard_order(self):
        # Spec §7: mesh (4, 3, 2), _S(0, 2)_S(0, 2)S(0) <-> S(0)[1]S(0)[2]S(0)[0].
        a = reshard.plan(mesh=[4, 3, 2], shape=[48], src=[_StridedShard(0, 2)] * 2 + [Shard(0)],
                         dst="RRR", mode="pytorch")
        self.assertTrue(a.trace.startswith("S(0)[1]S(0)[2]S(0)[0]"), a.trace)

    def test_torch_style_attributes_and_reduce_op_enums(self):
        class ReduceOp:  # as c10d prints it: ReduceOp.SUM
            name = "SUM"

        class TorchPartial:
            reduce_op = ReduceOp()

        class Entry:
            tensor_dim, mesh_dims = 0, [1, 0]

        class Spec:
            placements = (Shard(0), Shard(0))
            shard_order = (Entry(),)

        self.assertEqual(reshard.notation([TorchPartial(), Replicate()]), "P(sum)R")
        self.assertEqual(reshard.notation(Spec()), "S(0)[1]S(0)[0]")

    def test_bad_placements_and_orders_are_value_errors(self):
        with self.assertRaises(ValueError):
            reshard.notation([Shard(0), 3])
        with self.assertRaises(ValueError) as e:
            reshard.notation([Shard(0), Replicate()], shard_order=[(0, [1, 0])], field="src")
        self.assertIn("src: shard order of tensor dim 0", str(e.exception))


class Cost(unittest.TestCase):
    def test_cost_is_the_plan_cost_and_repeats_from_the_cache(self):
        reshard.clear_cache()
        want = reshard.plan(**IDX1).cost
        self.assertEqual(reshard.cost(**IDX1), want)
        self.assertEqual(reshard.cost(**IDX1), want)
        self.assertEqual(reshard.cache_stats()["python_costs"], 1)

    def test_requests_that_look_alike_are_not_confused(self):
        # 1 and True hash alike; a bool must still be refused after the int was cached.
        request = dict(mesh=[2, 1], shape=[8], src="S(0)R", dst="RR", mode="pytorch")
        reshard.cost(**request)
        with self.assertRaises(ValueError):
            reshard.cost(**dict(request, mesh=[2, True]))
        with self.assertRaises(ValueError):
            reshard.cost(**dict(request, devices_per_host=True))
        self.assertNotEqual(reshard.cost(**dict(request, dtype="f64")), reshard.cost(**request))

    def test_placement_objects_are_costed_like_text(self):
        self.assertEqual(reshard.cost(**dict(IDX1, src=Layout((Shard(0),) * 3, ((0, (1, 0, 2)),)))),
                         reshard.cost(**IDX1))


class CrossMesh(unittest.TestCase):
    # Trainer to inference (spec §14): f32 [64, 32] as S(0)S(1) on 4x2 ranks
    # 0-7 to S(1) on 2 ranks 8, 9. Each source rank holds a 16x16 block (1024
    # bytes) that lies in exactly one destination rank's 64x16 column block
    # (4096 bytes), so the crossing is 8 pairs of 1024 bytes and every
    # destination rank receives its whole block.
    MOVE = dict(mesh=[4, 2], shape=[64, 32], src="S(0)S(1)", dst_mesh=[2], dst_ranks=[8, 9],
                dst="S(1)")

    def test_plan_is_a_cross_mesh_plan_with_the_crossing(self):
        p = reshard.plan(**self.MOVE)
        self.assertIsInstance(p, reshard.CrossMeshPlan)
        self.assertEqual((p.src_mesh, p.dst_mesh), ([4, 2], [2]))
        self.assertEqual((p.src_ranks, p.dst_ranks), (list(range(8)), [8, 9]))
        self.assertEqual(p.crossing["participants"], list(range(10)))
        self.assertEqual(sorted((q["src"], q["dst"]) for q in p.crossing["pairs"]),
                         [(r, 8 + r % 2) for r in range(8)])
        self.assertEqual({q["bytes"] for q in p.crossing["pairs"]}, {1024})
        self.assertEqual(p.crossing["max_bytes_sent"], 1024)
        self.assertEqual(p.crossing["receive_lower_bound_max"], 4096)
        self.assertEqual((p.before, p.after), ([], []))
        self.assertEqual(p.to_dict()["cross_mesh"], True)
        self.assertIn("S(0)S(1) on [4, 2]", repr(p))

    def test_steps_after_the_crossing_are_steps(self):
        # A Partial source is reduced on the source mesh before it crosses.
        p = reshard.plan(**dict(self.MOVE, src="P(sum)S(1)"))
        self.assertTrue(p.before, p)
        self.assertTrue(all(isinstance(s, reshard.Step) for s in p.before + p.after))

    def test_max_memory_splits_the_crossing_into_rounds(self):
        # Unlimited, a destination rank holds its 4096-byte block and receives
        # 4096 bytes: peak 8192 (spec §14 "Memory"). At 6 KiB it must take
        # its 4 slices of 1024 bytes in two rounds of 2048.
        free = reshard.plan(**self.MOVE)
        limited = reshard.plan(max_memory=6144, **self.MOVE)
        self.assertEqual((free.crossing["rounds"], free.peak_bytes), (1, 8192))
        self.assertEqual((limited.crossing["rounds"], limited.peak_bytes), (2, 6144))
        self.assertEqual((free.crossing["rounds_for"], limited.crossing["rounds_for"]),
                         (None, "memory"))
        with self.assertRaises(reshard.NoPlanError):
            reshard.plan(max_memory=4096, **self.MOVE)

    def test_cost_is_the_plans_and_named_where_unpriced(self):
        self.assertEqual(reshard.cost(**self.MOVE), reshard.plan(**self.MOVE).cost)
        self.assertGreater(reshard.cost(**self.MOVE), 0)
        self.assertIsNone(reshard.plan(**dict(self.MOVE, cost_model="pytorch")).cost)
        with self.assertRaises(ValueError) as e:
            reshard.cost(**dict(self.MOVE, cost_model="pytorch"))
        self.assertIn("cost_model:", str(e.exception))

    def test_bad_rank_lists_name_their_key(self):
        for key, value in (("dst_ranks", [8]), ("src_ranks", [0, 0, 1, 2, 3, 4, 5, 6])):
            with self.assertRaises(ValueError) as e:
                reshard.plan(**dict(self.MOVE, **{key: value}))
            self.assertIn(f"{key}:", str(e.exception))

    def test_cost_matrix_refuses_cross_mesh_keys(self):
        with self.assertRaises(ValueError) as e:
            reshard.cost_matrix(["S(0)", "R"], mesh=[2], shape=[8], dst_mesh=[4])
        self.assertIn("dst_mesh:", str(e.exception))


class CostMatrix(unittest.TestCase):
    LAYOUTS = ["S(0)R", "RS(1)", "RR", "P(sum)R", [Shard(1), Shard(0)]]

    def test_entries_are_graph_plan_costs(self):
        m = reshard.cost_matrix(self.LAYOUTS, mesh=[2, 2], shape=[8, 6])
        for i, a in enumerate(self.LAYOUTS):
            for j, b in enumerate(self.LAYOUTS):
                self.assertEqual(float(m[i][j]), reshard.plan(
                    mesh=[2, 2], shape=[8, 6], src=a, dst=b, algorithm="graph").cost)

    def test_without_numpy_a_list_of_lists(self):
        saved = sys.modules.get("numpy")
        sys.modules["numpy"] = None  # import numpy raises ImportError
        try:
            m = reshard.cost_matrix(["S(0)", "R"], mesh=[2], shape=[8])
        finally:
            if saved is None:
                del sys.modules["numpy"]
            else:
                sys.modules["numpy"] = saved
        self.assertIsInstance(m, list)
        self.assertEqual(m[0][0], 0.0)
        self.assertEqual(m[0][1], reshard.cost(mesh=[2], shape=[8], src="S(0)", dst="R",
                                               algorithm="graph"))

    def test_bad_layout_names_its_index(self):
        with self.assertRaises(ValueError) as e:
            reshard.cost_matrix(["S(0)", "X"], mesh=[2], shape=[8])
        self.assertIn("layouts[1]", str(e.exception))
        with self.assertRaises(ValueError):
            reshard.cost_matrix(["S(0)"], mesh=[2], shape=[8], algorithm="greedy")


class Threads(unittest.TestCase):
    # A native 4-D search that takes a while (tens of ms and up).
    SLOW = dict(mesh=[2, 2, 2, 2], shape=[64, 64, 64, 64], src="S(0)S(1)S(2)S(3)",
                dst="S(3)S(2)S(1)S(0)")

    def test_the_gil_is_released_while_planning(self):
        # No timing: with the interpreter's switch interval made huge, this
        # thread never hands the GIL over by itself, so the helper thread
        # (woken by `go`) can only run while this thread is blocked or inside
        # C++ that released the GIL. It records whether a plan was running
        # then. Holding the GIL through the search would make it run only at
        # join(), after every plan, and the check fails every time.
        go, ran = threading.Event(), threading.Event()
        state = {"planning": False, "seen_planning": None}

        def helper():
            go.wait()
            state["seen_planning"] = state["planning"]
            ran.set()

        saved = sys.getswitchinterval()
        sys.setswitchinterval(1000.0)
        try:
            thread = threading.Thread(target=helper)
            thread.start()
            go.set()
            # Up to 50 plans (max_states no other test uses: none from the
            # plan cache); the helper wakes within the first one or few.
            for i in range(50):
                state["planning"] = True
                reshard.plan(**self.SLOW, max_states=987654 - i)
                state["planning"] = False
                if ran.is_set():
                    break
            thread.join()
        finally:
            sys.setswitchinterval(saved)
        self.assertTrue(state["seen_planning"], "no other thread ran while reshard.plan searched")

    def test_threads_planning_at_once_agree(self):
        results = []

        def run():
            results.append(reshard.plan(**dict(self.SLOW, dtype="f64")).to_dict())

        threads = [threading.Thread(target=run) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(len(results), 4)
        self.assertTrue(all(r == results[0] for r in results))


if __name__ == "__main__":
    unittest.main()
