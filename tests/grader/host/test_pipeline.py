"""grade(): from a submission to a verdict, in a real sandbox; and the outcome mapping."""
from __future__ import annotations

import dataclasses
import json
import os

import pytest

from grader import contract
from grader.contract import CheckRow, Kind, ResultDocument
from grader.host.pipeline import bundle_for, grade, verdict_from
from grader.host.spec import load_exercise
from sandbox import get_sandbox
from sandbox.base import Outcome
from testbed.exercises import CHECKS, TOML, make_exercise
from tests.grader.factories import GRADING_BACKENDS, STATIC_GRAPH, grading_sandbox


@pytest.fixture(scope="module")
def exercise():
    return load_exercise(STATIC_GRAPH)


@pytest.fixture(params=GRADING_BACKENDS)
def sandbox(request, requires):
    return grading_sandbox(request.param, requires)


KEY = b"the run's secret"


def outcome(status="ok", files=None, key=KEY, **fields) -> Outcome:
    """A sandbox's outcome; a result file in ``files`` comes signed with ``key`` (None: unsigned)."""
    defaults = dict(exit_code=0, signal=None, stdout=b"", stderr=b"", stdout_truncated=False, stderr_truncated=False,
                    files_truncated=False, wall_s=1.0, cpu_s=0.5, max_rss_bytes=1 << 20, backend="local")
    files = dict(files or {})
    result = files.get(f"out/{contract.RESULT_FILE}")
    if result is not None and key is not None:
        files[f"out/{contract.RESULT_MAC_FILE}"] = contract.result_mac(result, key)
    return Outcome(status=status, files=files, **{**defaults, **fields})


def test_the_reference_solution_is_accepted(exercise, sandbox):
    verdict = grade(exercise, exercise.solution, sandbox, seed=11)
    assert verdict.verdict == Kind.ACCEPTED, verdict.to_dict()
    assert verdict.score == 1.0 and all(c.passed for c in verdict.checks)
    case = verdict.perf["cases"][0]
    assert case["decision"] == "pass" and case["n"] >= 10
    assert case["interval"][0] <= case["ratio"] <= case["interval"][1]
    assert verdict.backend == sandbox.name and verdict.usage.wall_s > 0
    assert not any("unisolated" in note for note in verdict.notes)
    # The machine the timings came from travels with them, as the load does.
    host = verdict.perf["host"]
    assert host["cpus"] == os.cpu_count() and host["cpu_model"] and host["sandbox"].startswith(sandbox.name)
    assert verdict.perf["host_load"]["cpus"] == os.cpu_count()


def test_a_wrong_answer_says_what_was_wrong_on_visible_checks_only(exercise, sandbox):
    wrong = exercise.solution.replace("values[name] = func(", "values[name] = 1 + func(")
    verdict = grade(exercise, wrong, sandbox, seed=3)
    assert verdict.verdict == Kind.PARTIAL and 0 < verdict.score < 1
    example = next(c for c in verdict.checks if c.name == "runs_the_article_example")
    assert not example.passed and "expected 10, got 11" in example.message
    hidden = next(c for c in verdict.checks if c.name == "random_graphs_in_any_order")
    assert not hidden.visible and hidden.message == "a hidden check failed"


def test_a_traceback_ends_at_the_students_own_line(exercise, sandbox):
    code = ("class StaticGraph:\n    def __init__(self):\n        pass\n"
            "    def add_op(self, name, func, deps):\n        raise ValueError('no ' + name)\n")
    verdict = grade(exercise, code, sandbox, seed=1)
    assert verdict.verdict == Kind.RUNTIME_ERROR
    message = verdict.checks[0].message
    assert message.startswith("Traceback (most recent call last):\n  File \"submission.py\", line 5, in add_op")
    assert message.endswith("ValueError: no wx") and "harness" not in message and "/job" not in message


def test_a_syntax_error_is_reported_with_its_line(exercise, sandbox):
    verdict = grade(exercise, "class StaticGraph:\n    def build(self)\n        pass\n", sandbox)
    assert verdict.verdict == Kind.SYNTAX_ERROR and verdict.score == 0
    assert any("line 2" in note and "SyntaxError" in note for note in verdict.notes)


def test_an_empty_file_gets_a_clear_runtime_error(exercise, sandbox):
    verdict = grade(exercise, "", sandbox)
    assert verdict.verdict == Kind.RUNTIME_ERROR
    assert "has no attribute 'StaticGraph'" in verdict.checks[0].message


def test_an_endless_loop_is_a_time_limit(tmp_path, sandbox):
    spec = load_exercise(make_exercise(tmp_path / "ex"))
    verdict = grade(spec, "def add(a, b):\n    while True:\n        pass\n", sandbox)
    assert verdict.verdict == Kind.TIME_LIMIT
    assert all(c.kind == Kind.TIME_LIMIT for c in verdict.checks if c.visible)
    assert all(c.message_id == "hidden.failed" for c in verdict.checks if not c.visible)  # however it failed


def test_the_bundle_carries_the_contract_and_the_harness_but_not_the_host_side(exercise):
    files = bundle_for(exercise, "x = 1\n", seed=5)
    needed = {"grader/contract.py", "grader/harness/judge.py", contract.SUBMISSION_FILE, contract.CHECKS_FILE}
    assert needed <= set(files)
    assert not any(name.startswith("grader/host/") or name.startswith("grader/quizzes/") for name in files)
    assert json.loads(files[contract.MANIFEST_FILE])["seed"] == 5


def test_the_engines_ship_only_with_an_exercise_that_imports_them(tmp_path, exercise):
    assert not exercise.uses_engines
    assert not any(name.startswith("grader/engines/") for name in bundle_for(exercise, "", 1))
    checks = "from grader.engines import tensor\n" + CHECKS
    spec = load_exercise(make_exercise(tmp_path / "ex", checks=checks))
    assert spec.uses_engines and "grader/engines/dynamic.py" in bundle_for(spec, "", 1)


def test_a_missing_result_after_a_timeout_is_the_students_time_limit(exercise):
    verdict = verdict_from(outcome("timeout", exit_code=None, wall_s=73.25, cpu_s=12.5), exercise, KEY)
    assert verdict.verdict == Kind.TIME_LIMIT and not verdict.is_internal_error
    # How long and how much, after a hidden input may have reached the student: the operators' only.
    assert verdict.notes == ["the whole run was stopped: time limit reached"]
    assert "73.2 s wall, 12.5 s CPU" in verdict.operator_log[0]


def test_a_missing_result_otherwise_is_our_fault(exercise):
    verdict = verdict_from(outcome("ok", stderr=b"Traceback: boom"), exercise, KEY)
    # The judge's stderr is a traceback naming hidden files: for the operators, not the student.
    assert verdict.is_internal_error and "boom" in " ".join(verdict.operator_log)
    assert "boom" not in " ".join(verdict.notes)


def test_a_malformed_result_is_our_fault_not_the_students(exercise):
    for data in (b'{"format": 2, "checks": [{"name": 3}]', b" " * 100, b'{"format": 2, "checks": "all passed"}'):
        assert verdict_from(outcome(files={"out/result.json": data}), exercise, KEY).is_internal_error


def test_a_result_of_another_format_is_refused_by_name(exercise):
    old = json.dumps({"format": 1, "checks": [], "perf": None, "notes": [], "internal_error": None}).encode()
    verdict = verdict_from(outcome(files={"out/result.json": old}), exercise, KEY)
    assert verdict.is_internal_error
    assert f"format 1; this host reads format {contract.FORMAT}" in verdict.notes[0]


def test_the_judges_document_becomes_the_verdict(exercise):
    rows = [CheckRow("a", True, True, points=1.0, max_points=1.0),
            CheckRow("b", False, False, "wrong answer on a hidden case", 0.0, 2.0, Kind.WRONG_ANSWER)]
    data = ResultDocument(checks=rows, stdout="printed", notes=["judge note"]).to_json()
    verdict = verdict_from(outcome(files={"out/result.json": data}, notes=["sandbox note"]), exercise, KEY)
    assert (verdict.verdict, verdict.score, verdict.checks) == (Kind.PARTIAL, round(1 / 3, 4), rows)
    assert verdict.stdout == "printed" and verdict.notes == ["judge note", "sandbox note"]


def test_a_hidden_checks_row_is_rebuilt_from_its_name_and_points_alone(exercise):
    # Whatever the judge wrote for a hidden check (a kind, a text, values), the student is
    # shown that it failed, as a wrong answer, and nothing else (DESIGN invariant 4).
    hidden = next(c for c in exercise.checks if not c.visible and not c.perf)
    told = CheckRow(hidden.name, False, False, "your program was killed by SIGKILL", 0.0, hidden.points,
                    Kind.TIME_LIMIT, message_id="stop.killed", message_params={"signal": "SIGKILL"},
                    title={"en": "Hidden"}, expected="1", got="2", line=7)
    passed = CheckRow(hidden.name, True, False, "passed", hidden.points, hidden.points, None,
                      message_id="check.passed", line=3)
    failed = contract.hidden_failure(hidden.name, hidden.points, {"en": "Hidden"})
    assert (failed.message_id, failed.kind, failed.message_params) == ("hidden.failed", Kind.WRONG_ANSWER, {})
    for row, shown, kind in ((told, failed, Kind.WRONG_ANSWER),
                             (passed, dataclasses.replace(passed, line=None), Kind.ACCEPTED)):
        data = ResultDocument(checks=[row]).to_json()
        verdict = verdict_from(outcome(files={"out/result.json": data}), exercise, KEY)
        assert (verdict.checks, verdict.verdict) == ([shown], kind)


TORCH_CHECKS = """\
from grader.harness import check, close, fn, gradients, peak_memory_bytes, run_in, tensor

@check(points=1)
def gradients_match_the_reference(student, reference, rng):
    x = tensor(rng.normal(size=(3, 2)), requires_grad=True)
    close(gradients(student.loss, x), gradients(reference.loss, x))

@check(points=1)
def structure_and_memory(student, reference, rng):
    close(run_in(student, fn("lambda m: m.LAYERS"), student), 2)
    assert 0 < peak_memory_bytes(student) < 2**30
"""
TORCH_TOML = """\
id = "tiny-grad"
version = 1
difficulty = "easy"
tags = ["test"]
points = 1
[title]
en = "Grad"
zh-hans = "梯度"
[summary]
en = "A loss."
zh-hans = "损失。"
[checks]
visible = ["gradients_match_the_reference", "structure_and_memory"]
"""


def test_gradients_and_structural_checks_run_in_the_right_process(tmp_path, requires):
    sandbox = grading_sandbox("local", requires)
    solution = "LAYERS = 2\ndef loss(x):\n    return (x * x).sum() * 0.5\n"
    spec = load_exercise(make_exercise(tmp_path / "ex", toml=TORCH_TOML, checks=TORCH_CHECKS, solution=solution))
    assert grade(spec, solution, sandbox).verdict == Kind.ACCEPTED
    verdict = grade(spec, solution.replace("* 0.5", "* 0.25"), sandbox)
    assert verdict.verdict == Kind.PARTIAL and "result[0]" in verdict.checks[0].message


def test_unisolated_development_mode_still_grades_and_says_so(exercise):
    sandbox = get_sandbox("local", allow_unisolated=True, bwrap="/nonexistent/bwrap")  # a host without bubblewrap
    verdict = grade(exercise, exercise.solution, sandbox, seed=2)
    assert verdict.verdict == Kind.ACCEPTED, verdict.notes
    assert any("unisolated development mode" in note and "could read the hidden files" in note
               for note in verdict.notes)


def test_a_result_the_judge_did_not_sign_is_never_a_verdict(exercise, caplog):
    # A full score, written by anyone but the holder of this run's secret: unsigned, signed
    # with another key, or with its signature cut off; each an alarm and a retry.
    rows = [CheckRow(name, True, True, points=1.0, max_points=1.0) for name in ("a", "b")]
    forged = ResultDocument(checks=rows).to_json()
    for signed_with in (None, b"another run's secret", b""):
        verdict = verdict_from(outcome(files={"out/result.json": forged}, key=signed_with), exercise, KEY)
        assert verdict.is_internal_error and verdict.verdict == Kind.INTERNAL_ERROR, signed_with
    assert "did not sign" in caplog.text
    genuine = verdict_from(outcome(files={"out/result.json": forged}), exercise, KEY)
    assert genuine.verdict == Kind.ACCEPTED


# --- a sandbox that dies after a hidden input went out ------------------------------------------

def checkpoint_document(exercise) -> ResultDocument:
    """What the judge hands over before the first hidden input: every earlier check passed,
    every hidden one failed (as it reads if the sandbox dies from then on)."""
    rows = [contract.hidden_failure(c.name, c.points) if not c.visible and not c.perf else
            CheckRow(c.name, True, c.visible, contract.MESSAGES["check.passed"], c.points, c.points,
                     message_id="check.passed")
            for c in exercise.checks]
    return ResultDocument(checks=rows, stdout="loaded\n\n[output printed during hidden checks is not shown]",
                          notes=["judge note"])


def died(status="memory", checkpoint=None, ending="the sandbox was OOM-killed", **fields) -> Outcome:
    """A sandbox that ended with no report, as the backends' failed_outcome says it."""
    return outcome(status, exit_code=None, max_rss_bytes=0, notes=["warm pool", ending], ending=ending,
                   checkpoint=checkpoint, **fields)


def test_a_sandbox_that_dies_after_a_hidden_input_reads_as_the_hidden_check_failing(exercise):
    document = checkpoint_document(exercise)
    sealed = contract.seal_checkpoint(document.to_json(), KEY)
    for status in ("memory", "timeout", "output_limit", "signal"):
        verdict = verdict_from(died(status, sealed), exercise, KEY)
        # Exactly as the judge's own result with that hidden check failed would read ...
        ordinary = verdict_from(outcome(files={"out/result.json": document.to_json()}, notes=["warm pool"]),
                                exercise, KEY)
        assert (verdict.verdict, verdict.score, verdict.checks, verdict.stdout, verdict.notes) == (
            ordinary.verdict, ordinary.score, ordinary.checks, ordinary.stdout, ordinary.notes), status
        assert verdict.verdict == Kind.PARTIAL and verdict.notes == ["judge note", "warm pool"]
        # ... and how it died is the operators' alone.
        assert any("died after a hidden input" in line for line in verdict.operator_log), status


def test_a_death_before_any_hidden_input_still_reads_as_what_it_was(exercise):
    verdict = verdict_from(died("memory", checkpoint=None), exercise, KEY)
    assert verdict.verdict == Kind.MEMORY_LIMIT and not verdict.checks
    assert verdict.notes[0] == "the whole run was stopped: memory limit reached"


def test_a_checkpoint_the_judge_did_not_seal_is_ignored(exercise, caplog):
    # A full score, sealed by anyone but the holder of this run's secret, or under the result's
    # signature rather than the checkpoint's: an alarm, and the run reads as what the sandbox saw.
    rows = [CheckRow(c.name, True, c.visible, points=c.points, max_points=c.points) for c in exercise.checks]
    forged = ResultDocument(checks=rows).to_json()
    for sealed in (forged, contract.seal_checkpoint(forged, b"another run's secret"),
                   contract.result_mac(forged, KEY) + b"\n" + forged, contract.seal_checkpoint(forged, b"")):
        verdict = verdict_from(died("memory", sealed), exercise, KEY)
        assert verdict.verdict == Kind.MEMORY_LIMIT and not verdict.checks, sealed[:70]
        assert any("did not sign" in line for line in verdict.operator_log)
    assert "ALARM" in caplog.text


def test_a_result_beats_a_checkpoint_and_a_fault_of_ours_stays_ours(exercise):
    sealed = contract.seal_checkpoint(checkpoint_document(exercise).to_json(), KEY)
    rows = [CheckRow(c.name, True, c.visible, points=c.points, max_points=c.points) for c in exercise.checks]
    result = ResultDocument(checks=rows).to_json()
    # The judge finished: its result is the verdict, whatever it handed over on the way.
    assert verdict_from(outcome(files={"out/result.json": result}, checkpoint=sealed), exercise, KEY).accepted
    # sandbox_error is never the program's doing (the engine, the host): retried, as before.
    broken = verdict_from(died("sandbox_error", sealed, ending="killed by the host: report too large"), exercise, KEY)
    assert broken.is_internal_error and any("not used" in line for line in broken.operator_log)


def test_a_result_the_judge_reserved_but_never_wrote_is_no_result_not_an_alarm(exercise, caplog):
    # The judge killed alone (the bootstrap reported): its reserved pages come back blank.
    blank = {"out/result.json": b" " * 100, f"out/{contract.RESULT_MAC_FILE}": b" " * 64}
    sealed = contract.seal_checkpoint(checkpoint_document(exercise).to_json(), KEY)
    verdict = verdict_from(outcome("memory", files=blank, key=None, checkpoint=sealed), exercise, KEY)
    assert verdict.verdict == Kind.PARTIAL and "ALARM" not in caplog.text
    verdict = verdict_from(outcome("memory", files=blank, key=None), exercise, KEY)
    assert verdict.verdict == Kind.MEMORY_LIMIT


# --- an exercise's rules: refused before the run, and at run time ---------------------------

RULED = """
[mutants]
uses_fractions = "WRONG_ANSWER"

[[rules]]
modules = ["fractions"]
mutants = ["uses_fractions"]
reason.en = "add the numbers yourself"
reason.zh-hans = "自己把两个数加起来"
"""
USES_FRACTIONS = "from fractions import Fraction as F\n\ndef add(a, b):\n    return float(F(a) + F(b))\n"
# The module's name is built at run time: only the student's process can see which it is.
IMPORTS_FRACTIONS = ("import importlib\nF = importlib.import_module('frac' + 'tions').Fraction\n\n"
                     "def add(a, b):\n    return float(F(a) + F(b))\n")


@pytest.fixture
def ruled(tmp_path):
    return load_exercise(make_exercise(tmp_path / "ruled", toml=TOML + RULED,
                                       files={"mutants/uses_fractions.py": USES_FRACTIONS}))


def test_a_source_that_names_a_banned_module_is_refused_before_it_runs(ruled, sandbox):
    verdict = grade(ruled, USES_FRACTIONS, sandbox, seed=2)
    assert verdict.verdict == Kind.WRONG_ANSWER and verdict.score == 0
    shown = next(c for c in verdict.checks if c.visible)
    assert shown.message_id == "rules.refused"
    assert shown.message_params == {"api": "fractions", "line": 1,
                                    "reason": {"en": "add the numbers yourself", "zh-hans": "自己把两个数加起来"}}
    assert "fractions (line 1), which this exercise does not allow: add the numbers yourself" in shown.message


def test_an_import_built_at_run_time_is_refused_by_the_students_process(ruled, sandbox):
    verdict = grade(ruled, IMPORTS_FRACTIONS, sandbox, seed=2)
    assert verdict.verdict == Kind.WRONG_ANSWER, verdict.to_dict()
    shown = next(c for c in verdict.checks if c.visible)
    assert shown.message_id == "rules.refused_import" and shown.message_params["api"] == "fractions"
    # The same code passes where no rule refuses it: the refusal is the rule's doing.
    assert grade(dataclasses.replace(ruled, rules=[]), IMPORTS_FRACTIONS, sandbox, seed=2).verdict == Kind.ACCEPTED
