"""One graph proved on the trusted side: the student's process exports, the reference's worker runs.

Real workers (as the judge starts them, unisolated): the student's exports its function as
data, the reference's runs what the judge accepted. A graph the judge refuses never reaches
the reference's worker, which is started only by a call, so "never ran" is that the worker
was never started.
"""
from __future__ import annotations

import os
import pickle
from pathlib import Path

import numpy as np
import pytest

from grader.harness.api import CheckFailed, ProgramStopped, tensor
from grader.harness.graphs import MAX_INTEGER, MAX_NODES, check_graph, exported, run_graph
from grader.harness.messages import in_english
from grader.harness.programs import Process, Program, Remote
from tests.grader.factories import REPO

STUDENT = """\
import torch

def model(x, w):
    h = x @ w
    return torch.tanh(torch.where(h.sum() > 0, h * 2.0, h - 1.0))

def converts(x):
    return x.double() * 2, torch.zeros_like(x, memory_format=torch.preserve_format)


def breaks(x, w):
    h = x @ w
    if h.sum() > 0:  # a Python branch on a tensor: a graph break
        return h
    return -h
"""
REFERENCE = "import torch\n"


def start(tmp_path: Path, side: str, source: str) -> Program:
    path = tmp_path / f"{side}.py"
    path.write_text(source)
    process = Process(side, path, lib=REPO, env={"PATH": os.environ["PATH"]}, uid=None, untrusted=side == "student",
                      rlimits={}, stdout=tmp_path / f"{side}.out", stderr=tmp_path / f"{side}.err")
    program = Program(side, process, None)
    program.budget_s = 300.0
    return program


@pytest.fixture
def student(tmp_path):
    program = start(tmp_path, "student", STUDENT)
    program.start(timeout=300)
    yield Remote(program, 0)
    program.stop()


@pytest.fixture
def reference(tmp_path):
    """The reference's worker, not started: run_graph starts it only when it has a graph to run."""
    program = start(tmp_path, "reference", REFERENCE)
    yield Remote(program, 0)
    program.stop()


def inputs(rng, sign):
    x, w = rng.normal(size=(5, 3)), rng.normal(size=(3, 2))
    if np.sign((x @ w).sum()) != sign:
        w = -w
    return tensor(x, "float32"), tensor(w, "float32")


def expected(x, w):
    h = np.asarray(x, dtype=np.float64) @ np.asarray(w, dtype=np.float64)
    return np.tanh(h * 2.0 if h.sum() > 0 else h - 1.0)


def test_the_students_export_runs_on_the_trusted_side_on_inputs_it_never_saw(student, reference):
    rng = np.random.default_rng(3)
    graph = exported(student, "model", *inputs(rng, 1))["graph"]
    for sign in (1, -1):  # one graph holds both sides of the branch
        x, w = inputs(rng, sign)
        (got,) = run_graph(reference, graph, [x, w])
        np.testing.assert_allclose(np.asarray(got), expected(x, w), rtol=1e-5, atol=1e-6)


def test_a_graph_break_fails_the_export_in_the_students_process(student):
    found = exported(student, "breaks", *inputs(np.random.default_rng(4), 1))
    assert set(found) == {"error"} and found["error"]


HONEST = [{"op": "input", "name": "x"}, {"op": "input", "name": "w"},
          {"op": "call", "name": "mm", "target": "aten.mm.default", "args": [{"node": "x"}, {"node": "w"}],
           "kwargs": {}},
          {"op": "output", "args": [{"node": "mm"}]}]


def with_call(target="aten.mm.default", args=None, kwargs=None):
    call = {"op": "call", "name": "evil", "target": target, "args": args if args is not None else [{"node": "x"}],
            "kwargs": kwargs or {}}
    return [*HONEST[:2], call, {"op": "output", "args": [{"node": "evil"}]}]


class Exploit:
    def __reduce__(self):
        return (os.system, ("touch /tmp/graphs-pwned",))


MALICIOUS = {
    "a pickle with __reduce__ instead of a graph": pickle.dumps(Exploit()),
    "a pickle inside an argument": with_call(args=[{"node": "x"}, pickle.dumps(Exploit())]),
    "a target that is not a string": with_call(target=["os", "system"]),
    "an absurd size": with_call(target="aten.expand.default", args=[{"node": "x"}, [MAX_INTEGER * 4, 3]]),
    "a reference to a later node": with_call(args=[{"node": "later"}]),
    "a string argument": with_call(args=["rm -rf /"]),
    "a tagged object": with_call(args=[{"$": "fn", "src": "lambda: 1"}]),
    "too many nodes": [*HONEST[:2]] + [{"op": "input", "name": f"n{i}"} for i in range(MAX_NODES)],
    "no output": HONEST[:3],
    "a third input": [{"op": "input", "name": "extra"}, *HONEST],
}


@pytest.mark.parametrize("payload", list(MALICIOUS), ids=list(MALICIOUS))
def test_a_malicious_graph_is_the_students_runtime_error_and_never_runs(reference, payload):
    x, w = inputs(np.random.default_rng(5), 1)
    with pytest.raises(ProgramStopped) as stopped:
        run_graph(reference, MALICIOUS[payload], [x, w])
    assert (stopped.value.side, stopped.value.kind) == ("student", "RUNTIME_ERROR")
    detail = stopped.value.reason.params["detail"]
    assert set(detail) == {"en", "zh-hans"} and "graph" in in_english(detail)
    assert not reference._program.process.started  # refused before any process saw it
    assert not Path("/tmp/graphs-pwned").exists()


OUTSIDE_THE_SET = {
    "a custom operator": "mynamespace.system.default",
    "a Python path": "os.system",
    "a strided view": "aten.as_strided.default",
    "an in-place operator": "aten.add_.Tensor",
    "a data-dependent size": "aten.nonzero.default",
    "a value leaving the graph": "aten.item.default",
}


@pytest.mark.parametrize("target", list(OUTSIDE_THE_SET.values()), ids=list(OUTSIDE_THE_SET))
def test_an_operator_outside_the_set_is_a_wrong_answer_that_names_it_and_never_runs(reference, target):
    x, w = inputs(np.random.default_rng(5), 1)
    with pytest.raises(CheckFailed) as failed:
        run_graph(reference, with_call(target=target), [x, w])
    detail = failed.value.reason.params["detail"]
    assert set(detail) == {"en", "zh-hans"} and f"`{target}`" in detail["en"] and f"`{target}`" in detail["zh-hans"]
    assert not reference._program.process.started


def test_sizes_are_known_before_memory_is_spent(reference):
    """Each size is within the integer bound, their product (~7e10 floats) is not: the meta
    run refuses it in the reference's worker, before the real run could allocate it."""
    x, w = inputs(np.random.default_rng(6), 1)
    graph = with_call(target="aten.expand.default", args=[{"node": "x"}, [4096, 4096, 5, 3]])
    check_graph(graph, 2)  # well-formed: only running it tells the size
    with pytest.raises(ProgramStopped) as stopped:
        run_graph(reference, graph, [x, w])
    assert stopped.value.kind == "RUNTIME_ERROR" and "elements" in in_english(stopped.value.reason.params["detail"])
    assert reference._program.process.alive  # refused, not crashed


def test_dtype_conversions_and_their_keywords_cross_as_tags(student, reference):
    """``.double()`` and ``zeros_like`` carry a dtype, a device, a layout and a memory format:
    each crosses as a tag the judge knows, never as an object."""
    x, _ = inputs(np.random.default_rng(8), 1)
    graph = exported(student, "converts", x)["graph"]
    assert any(node.get("kwargs") for node in graph)
    got, zeros = run_graph(reference, graph, [x])
    assert got.torch_dtype == "float64" and np.allclose(got, np.asarray(x, dtype=np.float64) * 2)
    assert not np.asarray(zeros).any()


def test_a_graph_that_raises_when_run_is_the_students_error(reference):
    x, w = inputs(np.random.default_rng(7), 1)
    graph = with_call(args=[{"node": "x"}, {"node": "x"}])  # (5, 3) @ (5, 3)
    with pytest.raises(ProgramStopped) as stopped:
        run_graph(reference, graph, [x, w])
    assert (stopped.value.side, stopped.value.kind) == ("student", "RUNTIME_ERROR")
    assert "raised" in in_english(stopped.value.reason.params["detail"])


def test_a_graph_that_raises_is_a_wrong_answer_where_the_checks_say_so(reference):
    """dynamic-shape-recompiles runs the one graph at sizes it must serve: a graph made for one
    size fails a shape check at another, which is a wrong answer there, not a crash."""
    x, w = inputs(np.random.default_rng(7), 1)
    graph = with_call(args=[{"node": "x"}, {"node": "x"}])  # (5, 3) @ (5, 3)
    with pytest.raises(CheckFailed) as failed:
        run_graph(reference, graph, [x, w], raising_is_wrong=True)
    assert "raised" in in_english(failed.value.reason.params["detail"])
    assert reference._program.process.alive


SIZED = [{"op": "input", "name": "rows"}, {"op": "input", "name": "x"},
         {"op": "call", "name": "view", "target": "aten.view.default",
          "args": [{"node": "x"}, [{"node": "rows"}, 3, -1]], "kwargs": {}},
         {"op": "call", "name": "amax", "target": "aten.amax.default", "args": [{"node": "view"}, [1]], "kwargs": {}},
         {"op": "output", "args": [{"node": "amax"}]}]


@pytest.mark.parametrize("rows", [1, 2, 65])
def test_an_int_input_is_a_symbolic_size_the_judge_feeds(reference, rows):
    """Dynamo's graph for a symbolic batch takes the batch size as an input: the judge feeds the
    size of the batch it made, in the meta run and the real one."""
    x = np.random.default_rng(rows).normal(size=(rows, 6))
    (got,) = run_graph(reference, SIZED, [rows, tensor(x)])
    np.testing.assert_allclose(np.asarray(got), x.reshape(rows, 3, 2).max(axis=1))
