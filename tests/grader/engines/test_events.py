"""The engines' optional event stream: silent by default, exact when recording."""
import numpy as np
import pytest

from grader.engines import F, Graph, events, tensor


def seed_graph():
    g = Graph("seed")
    w = g.placeholder((), "float64", name="w")
    x = g.placeholder((), "float64", name="x")
    b = g.placeholder((), "float64", name="b")
    z = g.op("add", [g.op("mul", [w, x], name="wx"), b], name="z")
    return g, g.op("where", [z >= 0.0, 1.0, 0.0], name="pred")


def test_nothing_is_recorded_outside_a_record_block():
    assert events.listener is None
    g, pred = seed_graph()
    g.compile(pred).run({"w": 2.0, "x": 5.0, "b": -2.0})
    (tensor(2.0, requires_grad=True) * 3.0).backward()
    assert events.listener is None


def test_static_engine_emits_define_then_passes_then_run_values():
    with events.record() as trace:
        g, pred = seed_graph()
        plan = g.compile(pred, fuse=False)
        result = plan.run({"w": 2.0, "x": 5.0, "b": -2.0})
    kinds = [e["kind"] for e in trace]
    first_pass, compiled = kinds.index("pass"), kinds.index("compiled")
    assert set(kinds[:first_pass]) == {"define"} and kinds[compiled + 1:] == ["run"] * (len(kinds) - compiled - 1)
    defined = {e["node"]: e for e in trace if e["kind"] == "define"}
    assert defined["wx"]["inputs"] == ["w", "x"] and defined["wx"]["op"] == "mul"
    assert [e["pass"] for e in trace if e["kind"] == "pass"] == [name for name, _ in plan.stages[1:]]
    compiled_event = trace[compiled]
    assert compiled_event["plan"] == [n.name for n in plan.plan.nodes]
    assert compiled_event["kernels"] == plan.kernel_count
    values = {e["node"]: e["value"] for e in trace if e["kind"] == "run"}
    assert values["wx"] == 10.0 and values["z"] == 8.0 and values["pred"] == result == 1.0
    # a constant is described with its value; CSE merged the two zeros, so one never runs
    assert sorted(e["value"] for e in defined.values() if e["op"] == "constant") == [0.0, 0.0, 1.0]
    assert sum(1 for n in plan.plan.nodes if n.op == "constant") == 2


def test_run_events_follow_memory_planned_fused_code_and_large_values_are_summarised():
    g = Graph("big")
    x = g.placeholder((8, 8), "float32", name="x")
    y = F.tanh(x) * 2.0 + 1.0
    plan = g.compile(y)
    feed = np.full((8, 8), 0.5, np.float32)
    expected = plan.run({"x": feed})
    with events.record() as trace:
        again = plan.run({"x": feed})
    np.testing.assert_array_equal(again, expected)
    last = [e for e in trace if e["kind"] == "run"][-1]
    assert last["fused"] == ["tanh", "mul", "add"]
    assert last["value"]["shape"] == [8, 8] and last["value"]["head"][0] == pytest.approx(float(expected[0, 0]))


def test_eager_engine_emits_each_op_as_it_runs_and_the_tape_backwards():
    with events.record() as trace:
        w = tensor(2.0, requires_grad=True)
        x = tensor(5.0)
        z = w * x + 1.0
        z.backward()
    assert [e["kind"] for e in trace] == ["tensor", "tensor", "op", "op", "backward", "backward"]
    mul, add = trace[2], trace[3]
    assert mul["inputs"] == [id(w), id(x)] and mul["value"] == 10.0 and mul["taped"]
    assert add["inputs"] == [mul["output"], 1.0] and add["output"] == id(z) and add["value"] == 11.0
    assert [e["op"] for e in trace[4:]] == ["add", "mul"]
    assert w.grad.item() == 5.0


def test_an_op_without_grad_is_not_taped():
    with events.record() as trace:
        tensor(2.0) * tensor(3.0)
    assert trace[-1]["kind"] == "op" and trace[-1]["taped"] is False


def test_records_nest_and_restore_the_previous_listener():
    with events.record() as outer:
        tensor(1.0)
        with events.record() as inner:
            tensor(2.0)
        tensor(3.0)
    assert [e["value"] for e in outer] == [1.0, 3.0] and [e["value"] for e in inner] == [2.0]
    assert events.listener is None
