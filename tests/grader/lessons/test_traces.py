"""The visualisations' traces come from the engines: the static and eager columns differ the
way define-then-run and define-by-run differ."""
from grader.lessons.traces import (
    DEFAULT_FLOW_PROGRAM,
    all_execution_traces,
    compile_flow,
    execution_trace,
    expression_graph,
)


def test_the_seed_demo_static_column_defines_compiles_then_runs_and_agrees_with_eager():
    trace = execution_trace("seed", {"w": 2.0, "x": 5.0, "b": -2.0})
    phases = [s["phase"] for s in trace["static"]["steps"]]
    compile_at = phases.index("compile")
    assert set(phases[:compile_at]) == {"define"} and set(phases[compile_at + 1:]) == {"run"}
    static_values = {s["node"]: s["value"] for s in trace["static"]["steps"] if s["phase"] == "run"}
    eager_values = {s["node"]: s["value"] for s in trace["eager"]["steps"]}
    for name in ("wx", "z", "pred"):
        assert static_values[name] == eager_values[name], name
    assert eager_values["wx"] == 10.0 and "def seed_static" in trace["static"]["source"]


def test_with_a_branch_the_eager_tape_differs_per_input_while_the_static_graph_does_not():
    above, below = execution_trace("branch", {"x": 3.0}), execution_trace("branch", {"x": 1.0})
    defined = [[s["node"] for s in t["static"]["steps"] if s["phase"] == "define"] for t in (above, below)]
    assert defined[0] == defined[1] and {"h-4", "4-h", "y"} <= set(defined[0])
    ops = [[(s["op"], tuple(s["inputs"])) for s in t["eager"]["steps"] if s["phase"] == "op"] for t in (above, below)]
    assert ops[0][-1] == ("sub", ("h", "4.0")) and ops[1][-1] == ("sub", ("4.0", "h"))
    assert [s["value"] for s in above["eager"]["steps"]][-1] == 5.0
    assert [s["value"] for s in below["eager"]["steps"]][-1] == 3.0
    assert len(all_execution_traces()) == 4


def test_compile_flow_shows_each_pass_changing_the_plan():
    flow = compile_flow(DEFAULT_FLOW_PROGRAM)
    by_pass = {s["pass"]: s for s in flow["stages"]}
    assert by_pass["dead_code"]["node_count"] < by_pass["order"]["node_count"]          # exp(x) dropped
    assert by_pass["common_subexpressions"]["node_count"] < by_pass["simplify"]["node_count"]  # tanh(h)+1 twice
    assert by_pass["fuse_elementwise"]["kernel_count"] < by_pass["dead_code_after_optimize"]["kernel_count"]
    assert flow["peak_bytes"] <= flow["unplanned_bytes"]
    assert flow["kernel_count"] == by_pass["plan_memory"]["kernel_count"]


def test_the_first_lessons_picture_is_the_graph_the_static_engine_defined_and_ran():
    picture = expression_graph()
    assert [(n["node"], n["op"], n["inputs"]) for n in picture["nodes"]] == [
        ("x", "placeholder", []), ("y", "placeholder", []), ("s", "add", ["x", "y"]), ("out", "mul", ["s", "y"]),
    ]
    x, y = picture["inputs"]["x"], picture["inputs"]["y"]
    assert picture["values"] == {"x": x, "y": y, "s": x + y, "out": (x + y) * y}
    assert 'graph.op("mul", [s, y_], name="out")' in picture["source"]
