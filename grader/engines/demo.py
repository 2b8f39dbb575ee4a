"""The seed article's toy example, run on the real engines: ``python -m grader.engines.demo``.

A one-neuron classifier (w=2, x=5, b=-2; pred = 1 when w*x + b >= 0) computed twice:

* static: the graph is built and compiled first; its plan is printed while no value
  exists yet; values appear only when the compiled plan runs with a feed, and adding an
  op afterwards is refused;
* dynamic: every line computes at once and prints its value; an ordinary Python ``if``
  decides the prediction, which the tracer then refuses, because it cannot see values.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import functional as F
from .dynamic import tensor
from .errors import GraphFrozenError, TracerError
from .static import Graph
from .tracer import trace


def run_static(feeds: dict[str, int] | None = None) -> int:
    feeds = feeds or {"w": 2, "x": 5, "b": -2}
    print("=== static graph: define, compile, then run ===")
    graph = Graph("seed")
    w = graph.placeholder((), "int64", name="w")
    x = graph.placeholder((), "int64", name="x")
    b = graph.placeholder((), "int64", name="b")
    wx = graph.op("mul", [w, x], name="wx")
    z = graph.op("add", [wx, b], name="z")
    pred = graph.op("where", [z >= 0, 1, 0], name="pred")
    print(f"[build] {len(graph.nodes)} nodes described, no value computed yet: pred is {pred!r}")
    executable = graph.compile([wx, z, pred])
    print("[compile] plan, in execution order (still no values):")
    print("\n".join("    " + line for line in str(executable.plan).splitlines()))
    print(f"[compile] {executable.kernel_count} kernel(s) per run")
    wx_value, z_value, pred_value = executable.run(feeds)
    print(f"[run] feeds {feeds} -> wx = {wx_value}, z = {z_value}, pred = {pred_value}")
    try:
        graph.op("neg", [pred], name="late")
    except GraphFrozenError as exc:
        print(f"[refused] {exc}")
    return int(pred_value)


def run_dynamic() -> int:
    print("=== dynamic graph: every line runs as it is written ===")
    w = tensor(2)
    print(f"[line] w = {w.item()}")
    x = tensor(5)
    print(f"[line] x = {x.item()}")
    wx = w * x
    print(f"[line] wx = w * x = {wx.item()}")
    b = tensor(-2)
    print(f"[line] b = {b.item()}")
    z = wx + b
    print(f"[line] z = wx + b = {z.item()}")
    pred = 1 if z.item() >= 0 else 0   # plain Python control flow on a computed value
    print(f"[line] pred = 1 if z >= 0 else 0 = {pred}")
    return pred


def neuron(w: Any, x: Any, b: Any) -> Any:
    """Eager-style code with a Python `if` on a value: fine eagerly, refused by the tracer."""
    z = w * x + b
    if z >= 0:
        return F.where(z >= 0, 1, 0)
    return F.where(z >= 0, 1, 0)


def run_tracer() -> None:
    print("=== tracer: the same Python turned into a static graph ===")
    try:
        trace(neuron, np.int64(2), np.int64(5), np.int64(-2))
    except TracerError as exc:
        print(f"[refused] {exc}")

    def branch_free(w: Any, x: Any, b: Any) -> Any:
        return F.where(w * x + b >= 0, 1, 0)

    traced = trace(branch_free, np.int64(2), np.int64(5), np.int64(-2))
    print(f"[traced] without the if: {len(traced.graph.nodes)} nodes, pred = {traced(2, 5, -2)}")


def main() -> None:
    static_pred = run_static()
    print()
    dynamic_pred = run_dynamic()
    print()
    run_tracer()
    print()
    print(f"both engines predict {static_pred} and {dynamic_pred}")


if __name__ == "__main__":
    main()
