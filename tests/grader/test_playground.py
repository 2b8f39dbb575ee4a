"""Running, not grading, a short program in the sandbox; and the compile flow run there."""
import pytest

from grader.host.playground import MAX_CODE_BYTES, run_compile_flow, run_program
from grader.lessons.traces import DEFAULT_FLOW_PROGRAM
from tests.sandbox.backends import backend_sandbox


@pytest.fixture
def sandbox(requires):
    return backend_sandbox("local", requires)


def test_a_program_runs_with_our_engines_and_its_output_errors_and_time_come_back(sandbox):
    result = run_program("from grader.engines import tensor\nprint((tensor(2.0) * 3).item())\n"
                         "import sys\nprint('careful', file=sys.stderr)\n", sandbox)
    assert result.ok and result.stdout == "6.0\n" and result.stderr == "careful\n" and result.wall_s > 0


def test_a_failing_program_reports_its_traceback_and_exit_code(sandbox):
    result = run_program("x = 1\nraise ValueError('nope')\n", sandbox)
    assert not result.ok and result.exit_code == 1 and "ValueError: nope" in result.stderr


def test_an_endless_program_is_stopped(sandbox):
    from dataclasses import replace

    from grader.host.playground import PLAYGROUND_LIMITS
    result = run_program("while True:\n    pass\n", sandbox, replace(PLAYGROUND_LIMITS, cpu_s=1, wall_s=3))
    assert result.status == "timeout" and not result.ok


def test_oversized_code_is_refused_before_the_sandbox():
    with pytest.raises(ValueError, match="at most"):
        run_program("#" * (MAX_CODE_BYTES + 1), sandbox=None)


def test_the_compile_flow_runs_in_the_sandbox_and_errors_name_the_line(sandbox):
    result = run_compile_flow(DEFAULT_FLOW_PROGRAM, sandbox)
    assert result["ok"], result
    stages = result["flow"]["stages"]
    assert [s["pass"] for s in stages][0] == "order" and stages[-1]["pass"] == "plan_memory"
    assert stages[-1]["kernel_count"] < stages[0]["kernel_count"]
    broken = run_compile_flow("x = g.placeholder((2, 3), name='x')\ny = x @ x\noutputs = [y]\n", sandbox)
    assert not broken["ok"] and broken["error"].startswith("ShapeError (line 2)")
    missing = run_compile_flow("x = g.placeholder((2, 3), name='x')\n", sandbox)
    assert not missing["ok"] and "outputs = [node, ...]" in missing["error"]
