"""The traces the lessons' visualisations play, recorded from the real engines.

``execution_trace(program, inputs)`` runs one small program twice: on the static engine
(define, compile, run) and on the eager engine (each op computed at once, the tape growing
op by op). Every step comes from an event the engines emitted (``grader.engines.events``);
this module only names the eager values after the program's own variables.

``compile_flow(source)`` builds the graph a short program describes and returns the plan
after every compiler pass; it runs student-edited code, so the platform calls it inside the
sandbox (``compile_flow_in_sandbox``).
"""
from __future__ import annotations

import inspect
import json
import textwrap
from collections.abc import Callable
from typing import Any

import numpy as np

from grader.engines import F, Graph, events, tensor  # noqa: F401 - F is part of compile_flow's namespace
from grader.engines.static.passes import unplanned_peak_bytes

# --- the programs ----------------------------------------------------------------------
# Each program exists twice, written the way each engine wants it; the page shows this source.

def seed_static(w: float, x: float, b: float) -> Any:
    graph = Graph("seed")
    w_ = graph.placeholder((), "float64", name="w")
    x_ = graph.placeholder((), "float64", name="x")
    b_ = graph.placeholder((), "float64", name="b")
    wx = graph.op("mul", [w_, x_], name="wx")
    z = graph.op("add", [wx, b_], name="z")
    pred = graph.op("where", [graph.op("greater_equal", [z, 0.0], name="z>=0"), 1.0, 0.0], name="pred")
    plan = graph.compile(pred, fuse=False)   # one kernel per op, so each op is one step
    return plan.run({"w": w, "x": x, "b": b})


def seed_eager(w: float, x: float, b: float) -> dict[str, Any]:
    w = tensor(w, requires_grad=True, name="w")
    x = tensor(x, name="x")
    b = tensor(b, requires_grad=True, name="b")
    wx = w * x
    z = wx + b
    pred = tensor(1.0) if z.item() >= 0 else tensor(0.0)   # Python decides, on a value that exists
    return locals()


def branch_static(x: float) -> Any:
    graph = Graph("branch")
    x_ = graph.placeholder((), "float64", name="x")
    h = graph.op("mul", [x_, x_], name="h")
    above = graph.op("sub", [h, 4.0], name="h-4")     # both branches are in the graph...
    below = graph.op("sub", [4.0, h], name="4-h")
    test = graph.op("greater", [h, 4.0], name="h>4")
    y = graph.op("where", [test, above, below], name="y")   # ...and a conditional op picks one
    plan = graph.compile(y, fuse=False)
    return plan.run({"x": x})


def branch_eager(x: float) -> dict[str, Any]:
    x = tensor(x, requires_grad=True, name="x")
    h = x * x
    if h.item() > 4:          # an ordinary Python if: only the branch taken reaches the tape
        y = h - 4.0
    else:
        y = 4.0 - h
    return locals()


def expression_static(x: float, y: float) -> Any:
    graph = Graph("expression")
    x_ = graph.placeholder((), "float64", name="x")
    y_ = graph.placeholder((), "float64", name="y")
    s = graph.op("add", [x_, y_], name="s")
    out = graph.op("mul", [s, y_], name="out")   # y feeds two nodes: a graph, not a tree
    plan = graph.compile(out, fuse=False)
    return plan.run({"x": x, "y": y})


EXPRESSION_INPUTS = {"x": 2.0, "y": 3.0}


PROGRAMS: dict[str, dict[str, Any]] = {
    "seed": {"static": seed_static, "eager": seed_eager,
             "inputs": [{"w": 2.0, "x": 5.0, "b": -2.0}, {"w": 2.0, "x": 5.0, "b": -12.0}]},
    "branch": {"static": branch_static, "eager": branch_eager, "inputs": [{"x": 3.0}, {"x": 1.0}]},
}


def execution_trace(program: str, inputs: dict[str, float]) -> dict[str, Any]:
    """Both engines' steps for one program and one input, as JSON-ready data."""
    spec = PROGRAMS[program]
    with events.record() as static_events:
        spec["static"](**inputs)
    with events.record() as eager_events:
        named = spec["eager"](**inputs)
    return {
        "program": program, "inputs": inputs,
        "static": {"source": _source(spec["static"]), "steps": _static_steps(static_events)},
        "eager": {"source": _source(spec["eager"]), "steps": _eager_steps(eager_events, named)},
    }


def all_execution_traces() -> list[dict[str, Any]]:
    return [execution_trace(name, inputs) for name, spec in PROGRAMS.items() for inputs in spec["inputs"]]


def expression_graph() -> dict[str, Any]:
    """The first lesson's picture: the graph of out = (x + y) * y as the static engine defined
    it, and the value each node held when the compiled plan ran once on EXPRESSION_INPUTS."""
    with events.record() as trace:
        expression_static(**EXPRESSION_INPUTS)
    steps = _static_steps(trace)
    return {
        "source": _source(expression_static), "inputs": EXPRESSION_INPUTS,
        "nodes": [{"node": s["node"], "op": s["op"], "inputs": s["inputs"]} for s in steps if s["phase"] == "define"],
        "values": {s["node"]: s["value"] for s in steps if s["phase"] == "run"},
    }


def _source(fn: Callable[..., Any]) -> str:
    return textwrap.dedent(inspect.getsource(fn))


def _static_steps(trace: list[dict[str, Any]]) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    passes = [e for e in trace if e["kind"] == "pass"]
    for event in trace:
        if event["kind"] == "define":
            steps.append({"phase": "define", "node": event["node"], "op": event["op"], "inputs": event["inputs"],
                          "value": event["value"]})
        elif event["kind"] == "compiled":
            steps.append({"phase": "compile", "plan": event["plan"], "kernels": event["kernels"],
                          "passes": [{"pass": p["pass"], "nodes": p["nodes"], "notes": p["notes"]} for p in passes]})
        elif event["kind"] == "run":
            steps.append({"phase": "run", "node": event["node"], "op": event["op"], "value": event["value"]})
    return steps


def _eager_steps(trace: list[dict[str, Any]], named: dict[str, Any]) -> list[dict[str, Any]]:
    names = {id(value): name for name, value in named.items() if hasattr(value, "data")}
    labels: dict[int, str] = {}
    counts: dict[str, int] = {}

    def label(key: int, fallback: str) -> str:
        if key not in labels:
            base = names.get(key) or fallback
            counts[base] = counts.get(base, 0) + 1
            labels[key] = base if counts[base] == 1 else f"{base}#{counts[base]}"
        return labels[key]

    steps: list[dict[str, Any]] = []
    for event in trace:
        if event["kind"] == "tensor":
            steps.append({"phase": "leaf", "node": label(event["output"], event["name"] or "tensor"),
                          "value": event["value"], "requires_grad": event["requires_grad"]})
        elif event["kind"] == "op":
            inputs = [labels.get(i, f"tensor {i}") if isinstance(i, int) and i in labels else json.dumps(i)
                      for i in event["inputs"]]
            steps.append({"phase": "op", "node": label(event["output"], event["op"]), "op": event["op"],
                          "inputs": inputs, "value": event["value"], "taped": event["taped"]})
    return steps


# --- build -> compile flow -------------------------------------------------------------

DEFAULT_FLOW_PROGRAM = '''\
x = g.placeholder((64, 32), "float32", name="x")
w = g.constant(np.full((32, 16), 0.5, np.float32), name="w")
scale = g.constant(2.0, "float32", name="scale") * g.constant(0.5, "float32", name="half")
h = F.relu(x @ w) * scale          # scale is known at compile time: folded away
a = F.tanh(h) + 1.0
b = F.tanh(h) + 1.0                # the same as a: merged
unused = F.exp(x)                  # no output needs it: removed
y = F.sigmoid(a * b)
outputs = [y]
'''


def compile_flow(source: str) -> dict[str, Any]:
    """Run a short graph-building program (``g``, ``F``, ``np`` are given; it sets ``outputs``)
    and return the plan after every pass with node, kernel and peak-byte counts."""
    graph = Graph("lesson")
    namespace: dict[str, Any] = {"g": graph, "F": F, "np": np}
    with graph:
        exec(compile(source, "program.py", "exec"), namespace)  # noqa: S102 - sandboxed by the caller
    outputs = namespace.get("outputs")
    if outputs is None:
        raise ValueError("the program must end with outputs = [node, ...]")
    executable = graph.compile(outputs)
    stages = []
    for name, program in executable.stages:
        data = program.to_json()
        planned = name == "plan_memory"
        stages.append({"pass": name, "nodes": data["nodes"], "outputs": data["outputs"], "notes": data["notes"],
                       "node_count": len(data["nodes"]), "kernel_count": data["kernel_count"],
                       "peak_bytes": program.planned_bytes if planned else unplanned_peak_bytes(program)})
    return {"stages": stages, "defined": len(graph.nodes), "kernel_count": executable.kernel_count,
            "peak_bytes": executable.peak_bytes, "unplanned_bytes": executable.unplanned_bytes}
