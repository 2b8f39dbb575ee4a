"""The judge on its own: a bundle in a folder, ``python -m grader.harness out``, one result document.

No sandbox here (the judge runs in unisolated development mode, as on a laptop without
bubblewrap): these tests pin what the judge decides and writes; tests/grader/host and
tests/security hold it to the same inside real sandboxes.
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from grader import contract
from grader.contract import Kind, ResultDocument
from grader.harness import stats
from grader.host.pipeline import bundle_for
from grader.host.spec import load_exercise
from grader.host.verdict import overall_kind
from sandbox.framing import CHECKPOINT_FD_ENV, CHECKPOINT_REFUSED, CHECKPOINT_TAKEN, SECRET_FD_ENV
from testbed.exercises import CHECKS, TOML, make_exercise

SOLUTION = "def add(a, b):\n    return a + b\n"

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def spec(tmp_path_factory):
    return load_exercise(make_exercise(tmp_path_factory.mktemp("ex") / "tiny-adder"))


def judge(
    tmp_path: Path, spec, code: str, *, seed: int = 7, change=None, settle: bool = False
) -> tuple[ResultDocument, subprocess.CompletedProcess]:
    files = bundle_for(spec, code, seed, settle=settle)
    if change:
        change(files)
    for name, data in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    # Outside a sandbox the judge finds the runtime (sandbox.framing, sandbox.zygote) in the tree under test
    # (after the bundle).
    env = {"PATH": os.environ["PATH"], contract.UNISOLATED_ENV: "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "grader.harness", "out"], cwd=tmp_path, env=env, capture_output=True, timeout=120
    )
    return ResultDocument.from_json((tmp_path / "out" / contract.RESULT_FILE).read_bytes()), done


def test_a_correct_program_passes_every_check(tmp_path, spec):
    document, done = judge(tmp_path, spec, SOLUTION)
    assert done.returncode == 0 and document.internal_error is None
    assert [(row.name, row.passed, row.points) for row in document.checks] == [
        ("adds_small_numbers", True, 1.0),
        ("adds_random_numbers", True, 2.0),
    ]
    assert not document.isolated and any("unisolated" in note for note in document.notes)


def test_a_wrong_answer_is_explained_on_visible_checks_only(tmp_path, spec):
    document, _ = judge(tmp_path, spec, "def add(a, b):\n    return a - b\n")
    visible, hidden = document.checks
    assert visible.visible and visible.kind == Kind.WRONG_ANSWER and "expected 5" in visible.message
    assert not hidden.visible and hidden.kind == Kind.WRONG_ANSWER
    assert hidden.message == "a hidden check failed" and hidden.points == 0.0


def test_a_syntax_error_stops_every_check(tmp_path, spec):
    document, _ = judge(tmp_path, spec, "def add(a, b)\n    return a\n")
    assert {row.kind for row in document.checks if row.visible} == {Kind.SYNTAX_ERROR}
    # A hidden check's row says only that it failed, even here; the verdict still names the error.
    assert {row.message_id for row in document.checks if not row.visible} == {"hidden.failed"}
    assert overall_kind(document.checks) == Kind.SYNTAX_ERROR
    assert any(note.startswith("SyntaxError") and "line 1" in note for note in document.notes)


def test_a_row_carries_its_fields_so_that_nobody_reads_them_back_out_of_text(tmp_path, spec):
    document, _ = judge(tmp_path, spec, "def add(a, b):\n    return a - b\n")
    visible, hidden = document.checks
    assert visible.message_id.startswith("compare.") and (visible.expected, visible.got) == ("5", "-1")
    assert (hidden.expected, hidden.got, hidden.line) == (None, None, None)  # hidden: its fixed text, nothing else

    document, _ = judge(tmp_path, spec, "def add(a, b):\n    x = 1\n    return a + b + None\n")
    visible, hidden = document.checks
    assert visible.message_id == "error.raised" and visible.line == 3
    # Raised, not a wrong answer, but a hidden check's row says only that it failed.
    assert (hidden.message_id, hidden.kind, hidden.line) == ("hidden.failed", Kind.WRONG_ANSWER, None)


def test_a_syntax_error_row_says_its_line_and_carries_the_error(tmp_path, spec):
    document, _ = judge(tmp_path, spec, "x = 1\ndef add(a, b)\n    return a\n")
    visible, hidden = document.checks
    assert visible.message_id == "not_run.syntax_error" and visible.line == 2
    assert str(visible.message_params["error"]).startswith("SyntaxError") and visible.message_params["error"] in (
        document.notes)
    assert hidden.line is None and "error" not in hidden.message_params


def test_a_checks_title_travels_in_its_row(tmp_path):
    titled = CHECKS.replace(
        "@check(points=1)", '@check(points=1, title={"en": "Adds small numbers", "zh-hans": "小数相加"})')
    spec = load_exercise(make_exercise(tmp_path / "titled" / "tiny-adder", checks=titled))
    document, _ = judge(tmp_path / "run", spec, SOLUTION)
    assert [row.title for row in document.checks] == [{"en": "Adds small numbers", "zh-hans": "小数相加"}, {}]
    assert spec.check_titles == {"adds_small_numbers": {"en": "Adds small numbers", "zh-hans": "小数相加"}}


def test_what_the_student_prints_during_hidden_checks_is_not_shown(tmp_path, spec):
    code = "calls = 0\ndef add(a, b):\n    global calls\n    calls += 1\n    print('call', calls)\n    return a + b\n"
    document, _ = judge(tmp_path, spec, code)
    assert document.stdout.startswith("call 1\n") and "call 2" not in document.stdout
    assert "[output printed during hidden checks is not shown]" in document.stdout


def test_the_judges_own_failure_is_still_a_document(tmp_path, spec):
    def break_manifest(files):
        files[contract.MANIFEST_FILE] = json.dumps({"seed": 1}).encode()

    document, done = judge(tmp_path, spec, SOLUTION, change=break_manifest)
    assert done.returncode == 0 and document.checks == []
    # The traceback names lines of the hidden checks: only the operators' log holds it.
    assert document.internal_error is not None and "KeyError" not in document.internal_error
    assert "KeyError" in document.operator_log[-1]


# --- checkpoints: the result of a sandbox that dies after a hidden input ------------------------

TWO_HIDDEN = CHECKS + """
@check(points=3)
def adds_large_numbers(student, reference, rng):
    close(student.add(1e6, 2e6), reference.add(1e6, 2e6))
"""
KEY = b"this run's secret"


class Bootstrap:
    """The bootstrap's side of the judge's checkpoint channel: takes (or refuses) each one."""

    def __init__(self, refuse: bool = False):
        self.judges_end, self.end = socket.socketpair()
        self.refuse = refuse
        self.taken: list[bytes] = []
        self.thread = threading.Thread(target=self._take, daemon=True)
        self.thread.start()

    def _take(self):
        while header := self.end.recv(4, socket.MSG_WAITALL):
            payload = self.end.recv(int.from_bytes(header, "big"), socket.MSG_WAITALL)
            if not self.refuse:
                self.taken.append(payload)
            self.end.sendall(CHECKPOINT_REFUSED if self.refuse else CHECKPOINT_TAKEN)


def judge_in_a_sandbox(tmp_path: Path, spec, code: str, bootstrap: Bootstrap) -> ResultDocument:
    """The judge as the bootstrap starts it: the run's secret on a pipe, the checkpoint channel."""
    for name, data in bundle_for(spec, code, 7).items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    secret_r, secret_w = os.pipe()
    os.write(secret_w, KEY)
    os.close(secret_w)
    channel = bootstrap.judges_end.fileno()
    env = {"PATH": os.environ["PATH"], contract.UNISOLATED_ENV: "1", "PYTHONPATH": str(ROOT),
           SECRET_FD_ENV: str(secret_r), CHECKPOINT_FD_ENV: str(channel)}
    subprocess.run([sys.executable, "-m", "grader.harness", "out"], cwd=tmp_path, env=env, capture_output=True,
                   timeout=120, pass_fds=(secret_r, channel), check=True)
    os.close(secret_r)
    bootstrap.judges_end.close()
    bootstrap.thread.join(timeout=10)
    return ResultDocument.from_json((tmp_path / "out" / contract.RESULT_FILE).read_bytes())


def test_before_each_hidden_input_the_judge_hands_over_the_result_of_a_death_from_then_on(tmp_path):
    spec = load_exercise(make_exercise(tmp_path / "ex" / "tiny-adder", checks=TWO_HIDDEN))
    bootstrap = Bootstrap()
    final = judge_in_a_sandbox(tmp_path / "run", spec, "def add(a, b):\n    print('adding')\n    return a + b\n",
                               bootstrap)
    assert [(row.name, row.passed) for row in final.checks] == [
        ("adds_small_numbers", True), ("adds_random_numbers", True), ("adds_large_numbers", True)]
    checkpoints = [ResultDocument.from_json(contract.open_checkpoint(sealed, KEY) or b"") for sealed in bootstrap.taken]
    # One per hidden check, before its input went out: that check and every later one failed,
    # as any failure of theirs reads; what came before as it came.
    assert [[(row.message_id, row.points) for row in c.checks] for c in checkpoints] == [
        [("check.passed", 1.0), ("hidden.failed", 0.0), ("hidden.failed", 0.0)],
        [("check.passed", 1.0), ("check.passed", 2.0), ("hidden.failed", 0.0)],
    ]
    assert checkpoints[0].checks[1] == contract.hidden_failure("adds_random_numbers", 2.0)
    # The rest is what the final result says: the output sealed at the first hidden input, the notes.
    for checkpoint in checkpoints:
        assert (checkpoint.stdout, checkpoint.stderr, checkpoint.notes, checkpoint.perf) == (
            final.stdout, final.stderr, final.notes, final.perf)
    assert final.stdout == "adding\n\n[output printed during hidden checks is not shown]"


def test_no_hidden_input_goes_out_unless_the_host_holds_the_checkpoint(tmp_path, spec):
    bootstrap = Bootstrap(refuse=True)
    document = judge_in_a_sandbox(tmp_path, spec, SOLUTION, bootstrap)
    assert document.internal_error is not None and document.checks == []
    assert "did not take the judge's checkpoint" in document.operator_log[-1]


RACED_TOML = TOML + """
[perf.sums]
baseline = "reference"
at_most = 3.0
budget_s = 3
"""
RACED_CHECKS = CHECKS + """
from grader.harness import Race, perf

@perf()
def sums(student, reference, rng):
    return Race(student=student.add, reference=reference.add, inputs=lambda rng: (float(rng.normal()), 1.0))
"""


def test_a_speed_case_says_which_clock_decided_and_the_last_attempt_always_decides(tmp_path):
    spec = load_exercise(make_exercise(tmp_path / "raced", toml=RACED_TOML, checks=RACED_CHECKS))
    first, _ = judge(tmp_path / "first", spec, SOLUTION)
    last, _ = judge(tmp_path / "last", spec, SOLUTION, settle=True)
    for document, decisions in ((first, {"pass", "too_slow", "undecided"}), (last, {"pass", "too_slow"})):
        case = document.perf["cases"][0]
        assert case["decision"] in decisions and case["n"] >= stats.MIN_PAIRS, case
        # This host shows per-task CPU time, so the case's default clock is the CPU's.
        assert case["clock"] == "cpu" and case["student_wall_median_s"] > 0, case
        assert case["interval"][0] <= case["ratio"] <= case["interval"][1]
