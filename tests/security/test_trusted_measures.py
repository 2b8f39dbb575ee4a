"""Attacks on facts the judge measures on the trusted side (DESIGN invariant 5), on
docker-runc, docker-runsc and local.

Memory: checkpoint-rematerialise judges what a checkpoint keeps for backward by the memory a fresh
worker holds after a chain of blocks, read by the judge from /proc, the temp folder and, where
the sandbox shows one, its memory cgroup (grader.harness.memory_held). Each attack below keeps
every activation, as the saves_every_activation mutant does, and tries to hide it from that
reading; each must stay short of ACCEPTED, and fail the memory checks in particular.

A static-engine graph: static-while-loop's graph is built in the student's process and sent as
data; the trusted side rebuilds and runs it (grader.harness.engine_graphs), so an engine the
student's module changed at import answers for nothing.
"""
from __future__ import annotations

import pytest

from grader.contract import Kind
from grader.host import grade, load_exercise
from tests.grader.factories import REPO
from tests.sandbox.backends import BACKENDS, backend_sandbox
from tests.security.test_redteam_judge import summary

CHECKPOINT = REPO / "exercises" / "coding" / "checkpoint-rematerialise"
STATIC_WHILE_LOOP = REPO / "exercises" / "coding" / "static-while-loop"
MEMORY_CHECKS = {"keeps_only_the_inputs", "random_blocks"}


@pytest.fixture(params=BACKENDS)
def every_backend(request, requires):
    return backend_sandbox(request.param, requires)


@pytest.fixture(params=["local", "docker-runc"])
def two_backends(request, requires):
    return backend_sandbox(request.param, requires)


def assert_caught(verdict) -> None:
    assert verdict.verdict != Kind.ACCEPTED, summary(verdict)
    failed = {c.name for c in verdict.checks if not c.passed}
    assert MEMORY_CHECKS <= failed, summary(verdict)


# Memory set aside at import (touched, so resident) and given back during the measured call,
# making room for every activation: a count taken as a difference from after the import, or
# a peak from then on, would find nothing kept.
BALLAST = '''
_ballast = b"\\x01" * (120 * 2**20)


def checkpoint(fn, *args):
    global _ballast
    _ballast = None
    return fn(*args)
'''

# Every activation autograd keeps is written to a file in the program's home and read back in
# backward: the worker's resident memory holds none of them, the temp folder's tmpfs does.
SPILLED_TO_FILES = '''
import itertools
import os

import torch

_names = itertools.count()


def _to_file(tensor):
    if tensor.numel() * tensor.element_size() < 2**20:
        return tensor
    path = os.path.join(os.environ["HOME"], f"kept-{next(_names)}.pt")
    torch.save(tensor, path)
    return path


def _from_file(kept):
    return torch.load(kept) if isinstance(kept, str) else kept


def checkpoint(fn, *args):
    with torch.autograd.graph.saved_tensors_hooks(_to_file, _from_file):
        return fn(*args)
'''

# Every activation is sent down a pipe to a child process that keeps it and sends it back in
# backward: the worker holds none of them, its child all.
KEPT_BY_A_CHILD = '''
import io
import os

import torch

_keeper = None
_keys = iter(range(1, 1 << 30))


def _keep(requests, replies):
    kept = {}
    with os.fdopen(requests, "rb") as inbox, os.fdopen(replies, "wb") as outbox:
        while True:
            head = inbox.read(16)
            if len(head) < 16:
                os._exit(0)
            key, size = int.from_bytes(head[:8], "little"), int.from_bytes(head[8:], "little")
            if size:
                kept[key] = inbox.read(size)
            else:
                data = kept.pop(key)
                outbox.write(len(data).to_bytes(8, "little") + data)
                outbox.flush()


def _pipes():
    global _keeper
    if _keeper is None:
        to_child, from_parent = os.pipe()
        to_parent, from_child = os.pipe()
        if os.fork() == 0:
            os.close(from_parent), os.close(to_parent)
            _keep(to_child, from_child)
        os.close(to_child), os.close(from_child)
        _keeper = (os.fdopen(from_parent, "wb"), os.fdopen(to_parent, "rb"))
    return _keeper


def _send(tensor):
    if tensor.numel() * tensor.element_size() < 2**20:
        return tensor
    buffer = io.BytesIO()
    torch.save(tensor, buffer)
    key = next(_keys)
    outbox, _ = _pipes()
    outbox.write(key.to_bytes(8, "little") + len(buffer.getvalue()).to_bytes(8, "little") + buffer.getvalue())
    outbox.flush()
    return key


def _fetch(kept):
    if not isinstance(kept, int):
        return kept
    outbox, inbox = _pipes()
    outbox.write(kept.to_bytes(8, "little") + bytes(8))
    outbox.flush()
    size = int.from_bytes(inbox.read(8), "little")
    return torch.load(io.BytesIO(inbox.read(size)))


def checkpoint(fn, *args):
    with torch.autograd.graph.saved_tensors_hooks(_send, _fetch):
        return fn(*args)
'''

# Every activation is written to a memfd that no process maps and no folder shows: not in any
# resident count, not in the temp folder. Only a memory cgroup charges it.
KEPT_IN_MEMFDS = '''
import io
import os

import torch


def _to_memfd(tensor):
    if tensor.numel() * tensor.element_size() < 2**20:
        return tensor
    buffer = io.BytesIO()
    torch.save(tensor, buffer)
    fd = os.memfd_create("kept")
    data = memoryview(buffer.getvalue())
    while data:
        data = data[os.write(fd, data):]
    return fd


def _from_memfd(kept):
    if not isinstance(kept, int):
        return kept
    os.lseek(kept, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(kept, 1 << 20):
        chunks.append(chunk)
    os.close(kept)
    return torch.load(io.BytesIO(b"".join(chunks)))


def checkpoint(fn, *args):
    with torch.autograd.graph.saved_tensors_hooks(_to_memfd, _from_memfd):
        return fn(*args)
'''


@pytest.mark.parametrize("attack", [BALLAST, SPILLED_TO_FILES, KEPT_BY_A_CHILD, KEPT_IN_MEMFDS],
                         ids=["ballast", "files", "child", "memfd"])
def test_kept_activations_are_found_wherever_the_program_hides_them(every_backend, attack):
    assert_caught(grade(load_exercise(CHECKPOINT), attack, every_backend))


# --- a static-engine graph run where the student cannot reach ---------------------------------

# The graph holds no loop at all; the compiled program's run is replaced at import by one that
# answers with Python's own `while` on the values, which the exercise is about not needing. While
# the checks compiled and ran the graph in the student's process, this scored 1.0.
PYTHON_WHILE = '''
import numpy as np

from grader.engines import F, Graph, gradients
from grader.engines.static.compile import Executable

_asked = {}
_graph_run = Executable.run


def while_loop(cond_fn, body_fn, state, max_iters):
    _asked.update(cond=cond_fn, body=body_fn, max_iters=max_iters)
    return state * 1.0, state * 0.0


def _one_step(v):
    graph = Graph()
    here = graph.placeholder(v.shape, "float64", name="v")
    after = _asked["body"](here)
    (slope,) = gradients(F.sum(after), [here])
    return _graph_run(graph.compile([_asked["cond"](here), after, slope]), {"v": v})


def _run_with_python_while(self, feeds=None, **named):
    if not _asked or set(self.placeholders) != {"x"}:
        return _graph_run(self, feeds, **named)
    value = np.array({**(feeds or {}), **named}["x"], dtype=np.float64)
    steps, grad = np.zeros_like(value), np.ones_like(value)
    running, _, _ = _one_step(value)
    while running.any() and steps.max() < _asked["max_iters"]:
        _, after, slope = _one_step(value)
        grad = np.where(running, grad * slope, grad)
        value = np.where(running, after, value)
        steps = steps + running
        running = running & _one_step(value)[0] & (steps < _asked["max_iters"])
    return [value, steps, grad]


Executable.run = _run_with_python_while
'''


def test_a_graph_is_run_by_the_trusted_side_not_by_the_engine_the_student_changed(two_backends):
    verdict = grade(load_exercise(STATIC_WHILE_LOOP), PYTHON_WHILE, two_backends)
    assert verdict.verdict == Kind.WRONG_ANSWER, summary(verdict)
    assert not any(c.passed for c in verdict.checks), summary(verdict)


# A graph that is not the engine's: an op the registry lacks, and a constant too large to send.
UNKNOWN_OP = """
from grader.engines import F


def while_loop(cond_fn, body_fn, state, max_iters):
    state.graph._add("system", (state,), {"command": "id"}, state.shape, state.dtype, None)
    return state, state * 0.0
"""


def test_a_graph_with_an_op_the_engine_lacks_is_the_students_runtime_error(two_backends):
    verdict = grade(load_exercise(STATIC_WHILE_LOOP), UNKNOWN_OP, two_backends)
    assert verdict.verdict == Kind.RUNTIME_ERROR, summary(verdict)
