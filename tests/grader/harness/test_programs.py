"""The judge's side of a worker: a real process it starts, calls into, times and stops."""
from __future__ import annotations

import os
import resource
from pathlib import Path

import numpy as np
import pytest

from grader.harness.api import CheckFailed, ProgramError, ProgramStopped, tensor
from grader.harness.programs import Process, Program, Remote
from tests.grader.factories import REPO

PROGRAM = """\
import os, time

def add(a, b):
    return a + b

def scale(values, k):
    return [v * k for v in values]

def scale_in_place(values, k):
    values[0] = values[0] * k
    return values

def double(t):
    return t * 2

def sleep(s):
    time.sleep(s)

def leave():
    os._exit(3)

def fails():
    raise KeyError("missing")
"""


def start(tmp_path: Path, source: str = PROGRAM, rlimits: dict[int, int] | None = None) -> Program:
    program = tmp_path / "program.py"
    program.write_text(source)
    process = Process("student", program, lib=REPO, env={"PATH": os.environ["PATH"]}, uid=None, untrusted=False,
                      rlimits=rlimits or {}, stdout=tmp_path / "out", stderr=tmp_path / "err")
    side = Program("student", process, None)
    side.budget_s = 60.0  # the judge sets each phase's budget; calls past it are a time limit
    side.start(timeout=60)
    return side


@pytest.fixture
def student(tmp_path):
    program = start(tmp_path)
    yield program
    program.stop()


def test_the_budget_runs_out_across_calls(tmp_path, student):
    student.budget_s = 1.0
    student.call(0, "sleep", (0.6,), {})
    with pytest.raises(ProgramStopped, match=r"no answer within 0\.[34] s"):
        student.call(0, "sleep", (0.6,), {})
    with pytest.raises(ProgramStopped, match="used up by earlier checks"):
        student.call(0, "add", (1, 1), {})


def test_calls_return_plain_data_and_the_judge_keeps_the_clock(student):
    assert student.call(0, "add", (2, 3), {}) == 5
    value, seconds = student.timed_call(0, "sleep", (0.2,), {})
    assert value is None and 0.2 <= seconds < 5


def test_arrays_and_tensors_cross_as_values(tmp_path):
    # A worker sent tensors holds torch from its start (the sandbox preloads it for an exercise
    # whose checks send them; here the program imports it): no harness code imports it later.
    student = start(tmp_path, "import torch\n" + PROGRAM)
    try:
        assert student.call(0, "scale", ([1, 2],), {"k": 3}) == [3, 6]
        doubled = student.call(0, "double", (tensor([1.0, 2.0], dtype="float32"),), {})
        assert doubled.torch_dtype == "float32" and np.array_equal(np.asarray(doubled), [2.0, 4.0])
    finally:
        student.stop()


def test_a_tensor_never_makes_a_worker_import_torch(student):
    with pytest.raises(ProgramError, match="without torch"):
        student.call(0, "double", (tensor([1.0, 2.0], dtype="float32"),), {})


def test_changing_an_input_in_place_is_caught(student):
    with pytest.raises(CheckFailed, match="changed its input"):
        student.call(0, "scale_in_place", ([1, 2], 2), {})


def test_an_exception_comes_back_as_a_program_error(student):
    with pytest.raises(ProgramError) as raised:
        student.call(0, "fails", (), {})
    assert raised.value.type_name == "KeyError" and raised.value.side == "student"


def test_an_answer_too_late_is_a_time_limit_and_the_worker_is_stopped(student):
    with pytest.raises(ProgramStopped) as stopped:
        student.timed_call(0, "sleep", (30,), {}, timeout=0.5)
    assert stopped.value.kind == "TIME_LIMIT" and not student.process.alive


def test_a_program_that_exits_mid_check_is_a_runtime_error(student):
    with pytest.raises(ProgramStopped) as stopped:
        student.call(0, "leave", (), {})
    assert stopped.value.kind == "RUNTIME_ERROR" and "exited (status 3)" in stopped.value.message


def test_a_cpu_bound_program_meets_its_cpu_limit(tmp_path):
    program = start(tmp_path, "def spin():\n    while True:\n        pass\n", rlimits={resource.RLIMIT_CPU: 1})
    try:
        with pytest.raises(ProgramStopped) as stopped:
            program.call(0, "spin", (), {})
        assert stopped.value.kind == "TIME_LIMIT" and "CPU time limit" in stopped.value.message
    finally:
        program.stop()


def test_a_handle_stays_with_its_own_program(tmp_path, student):
    (tmp_path / "other").mkdir()
    other = start(tmp_path / "other")
    try:
        with pytest.raises(TypeError, match="cannot be passed"):
            student.call(0, "add", (Remote(other, 0), 1), {})
    finally:
        other.stop()
