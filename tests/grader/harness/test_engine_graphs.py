"""A static-engine graph run on the trusted side: the student's process builds and encodes it,
the reference's worker rebuilds and runs it (grader.harness.engine_graphs).

Real workers (as the judge starts them, unisolated). A graph the judge refuses never reaches
the reference's worker, which is started only by a call, so "never ran" is that the worker
was never started.
"""
from __future__ import annotations

import numpy as np
import pytest

from grader.harness.api import ProgramStopped, fn, run_in
from grader.harness.engine_graphs import ENCODE_SOURCE, MAX_CONSTANT_ITEMS, run_engine_graph
from grader.harness.messages import in_english
from grader.harness.programs import Remote
from tests.grader.harness.test_graphs import start  # a worker of either side, as the judge starts one

STUDENT = """\
from grader.engines import F
from grader.engines.static.compile import Executable

Executable.run = lambda self, feeds=None, **named: "whatever the student likes"


def halve_until_small(x):
    return F.where(x > 1.0, x * 0.5, x)
"""
BUILD = fn("lambda *a: (lambda ns: (exec(" + repr(ENCODE_SOURCE + """
def build(name):
    import sys
    from grader.engines import Graph
    graph = Graph()
    x = graph.placeholder((3,), "float64", name="x")
    return encode(graph, [getattr(sys.modules["submission"], name)(x)])
""") + ", ns), ns['build'](*a))[1])({})")


@pytest.fixture
def student(tmp_path):
    program = start(tmp_path, "student", STUDENT)
    program.start(timeout=300)
    yield Remote(program, 0)
    program.stop()


@pytest.fixture
def reference(tmp_path):
    program = start(tmp_path, "reference", "")
    yield Remote(program, 0)
    program.stop()


def test_the_graph_runs_in_the_reference_worker_whatever_the_student_did_to_its_engine(student, reference):
    graph = run_in(student, BUILD, "halve_until_small")
    x = np.array([0.5, 3.0, 8.0])
    value, grad = run_engine_graph(reference, graph, {"x": x}, grad=True)
    assert np.array_equal(value, [0.5, 1.5, 4.0]) and np.array_equal(grad, [1.0, 0.5, 0.5])


@pytest.mark.parametrize("graph", [
    "not a graph",
    {"nodes": [], "outputs": [0]},
    {"nodes": [{"op": "add", "inputs": [1, 2], "attrs": {}}], "outputs": [0]},  # inputs after the node
    {"nodes": [{"op": "placeholder", "inputs": [], "attrs": {}, "shape": [3], "dtype": "float64", "name": "y"}],
     "outputs": [0]},  # not the input the checks feed
    {"nodes": [{"op": "constant", "inputs": [], "attrs": {}, "shape": [MAX_CONSTANT_ITEMS + 1], "dtype": "float64",
                "value": [0.0] * (MAX_CONSTANT_ITEMS + 1)}], "outputs": [0]},
    {"nodes": [{"op": "placeholder", "inputs": [], "attrs": {}, "shape": [3], "dtype": "float64", "name": "x"},
               {"op": "neg", "inputs": [0], "attrs": {"axis": {"$": "fn"}}}], "outputs": [1]},  # no literal
    {"nodes": [{"op": "placeholder", "inputs": [], "attrs": {}, "shape": [3], "dtype": "float64", "name": "x"},
               {"op": "variable", "inputs": [], "attrs": {}}], "outputs": [1]},
], ids=["text", "empty", "forward", "other-input", "large-constant", "attribute", "variable"])
def test_a_graph_out_of_form_is_refused_before_the_reference_worker_starts(reference, graph):
    with pytest.raises(ProgramStopped) as stopped:
        run_engine_graph(reference, graph, {"x": np.zeros(3)})
    assert stopped.value.side == "student" and stopped.value.kind == "RUNTIME_ERROR"
    assert not reference._program.process.started


def test_an_op_the_engine_lacks_is_the_students_runtime_error(reference):
    graph = {"nodes": [{"op": "placeholder", "inputs": [], "attrs": {}, "shape": [3], "dtype": "float64", "name": "x"},
                       {"op": "system", "inputs": [0], "attrs": {"command": "id"}}], "outputs": [1]}
    with pytest.raises(ProgramStopped) as stopped:
        run_engine_graph(reference, graph, {"x": np.zeros(3)})
    assert stopped.value.side == "student" and "system" in in_english(stopped.value.reason)
