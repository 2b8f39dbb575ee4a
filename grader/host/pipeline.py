"""Host side of grading: pack a bundle, run the judge in a sandbox, read its one result.

    verdict = grade(load_exercise("exercises/coding/static-graph-executor"), code, get_sandbox("local"))

The judge inside the sandbox owns the result channel (``out/result.json``), which the
student's process cannot write, and signs what it writes with a secret made for this run
alone, which the sandbox hands to the judge and to no other process. A result that does
not carry the judge's signature is never a verdict, whatever it says: the operators are
alarmed and the run is retried (INTERNAL_ERROR). A missing result is either a limit the
sandbox enforced on the whole run (the student's doing: TIME_LIMIT, MEMORY_LIMIT,
OUTPUT_LIMIT) or our own fault (INTERNAL_ERROR, retried). What the judge and this module
agree on is in grader/contract.py.

Nothing of what a student's process did after it saw a hidden input reaches the verdict but
whether each hidden check passed: a hidden check's row is rebuilt here from its name and
points alone (``shown_rows``), and the host's load is summarised up to the judge's first
hidden input (``before_hidden_s``), so neither a kind of failure nor tasks spun up then shows.
Nor does a death of the whole sandbox: before each hidden input the judge hands over a signed
checkpoint, the result of a run that dies from then on (that hidden check and every later one
failed), and a run that ends with no result after one reads exactly as that result
(``died_after_hidden_input``).
"""
from __future__ import annotations

import dataclasses
import json
import logging
import math
import secrets
from pathlib import Path
from typing import Any, Literal

from grader import contract
from grader.contract import CheckRow, ContractError, Kind, Manifest, ResultDocument
from grader.host.load import HostLoad, host_hardware
from grader.host.spec import ExerciseSpec
from grader.host.verdict import Usage, Verdict, overall_kind, score_of
from sandbox import OUTPUT_DIR, Limits, Outcome, RunOptions, Sandbox

log = logging.getLogger(__name__)

# The judge writes its result into the sandbox's output folder, which it is told here.
HARNESS_ARGV = ("python3", "-m", "grader.harness", OUTPUT_DIR)
GRADER_DIR = Path(__file__).resolve().parent.parent
_OUTCOME_VERDICTS = {"timeout": Kind.TIME_LIMIT, "memory": Kind.MEMORY_LIMIT, "output_limit": Kind.OUTPUT_LIMIT}
_LIMIT_TEXTS = {
    "timeout": "time limit reached", "memory": "memory limit reached", "output_limit": "output limit reached"}
# How a sandbox may end with no result that a student's process can have caused: a limit of the
# whole run, or a trusted process killed by a signal (state the student planted is the student's).
# sandbox_error is never the program's doing (sandbox/README.md), and stays ours: retried.
_DEATHS = frozenset({*_OUTCOME_VERDICTS, "signal"})


Attempt = Literal["only", "first", "last"]


def grade(
    exercise: ExerciseSpec, code: str, sandbox: Sandbox, *, seed: int | None = None, attempt: Attempt = "only"
) -> Verdict:
    """Judge ``code`` against ``exercise`` in ``sandbox``. Raises SandboxUnavailable on infrastructure faults.

    A speed case is never passed on a measurement that did not show it: when its interval
    does not settle within the budget, or it was timed by the wall clock while the host was
    busy, the verdict comes back with ``measure_again`` set. ``attempt`` says who measures
    again: "first", the caller (the platform, later, on a quieter worker); "last", nobody: an
    interval that still does not settle is decided by its median, and the load is recorded;
    "only" (tools, tests), this function, at once, as the last attempt."""
    seed = secrets.randbits(63) if seed is None else seed
    verdict = _grade_once(exercise, code, sandbox, seed, settle=attempt == "last")
    if attempt == "only" and verdict.measure_again:
        verdict = _grade_once(exercise, code, sandbox, seed, settle=True)
    return verdict


def _grade_once(exercise: ExerciseSpec, code: str, sandbox: Sandbox, seed: int, *, settle: bool) -> Verdict:
    # A sandbox in unisolated development mode cannot give the judge a second uid; the judge
    # is told, runs the student under its own uid, and the verdict carries a note.
    env = {} if sandbox.isolated else {contract.UNISOLATED_ENV: "1"}
    key = secrets.token_bytes(32)
    options = RunOptions(gpus=1 if exercise.gpu else None, env=env, preload=exercise.preload, trusted=True,
                         secret=key)
    bundle = bundle_for(exercise, code, seed, settle=settle)
    with HostLoad() as load:
        outcome = sandbox.run(bundle, argv=HARNESS_ARGV, limits=sandbox_limits(exercise), options=options)
    verdict = verdict_from(outcome, exercise, key)
    if verdict.perf is not None:
        before_hidden = _before_hidden_s(verdict.perf)
        verdict.perf["host_load"] = load.summary(until_s=before_hidden)
        runtime = getattr(sandbox, "runtime", None)
        verdict.perf["host"] = {**host_hardware(), "sandbox": sandbox.name + (f" ({runtime})" if runtime else "")}
        if not settle:
            verdict.unsettled = unsettled_speed(verdict, busy=load.busy(until_s=before_hidden))
    return verdict


def _before_hidden_s(perf: dict[str, Any]) -> float:
    """Seconds from the judge's start to its first hidden input; 0 when the judge did not say
    (a result from before it did: then no sample is shown, rather than one from after)."""
    value = perf.get("before_hidden_s", 0.0)
    if value is None:  # no hidden input was sent: the whole run
        return math.inf
    return float(value) if type(value) in (int, float) and value >= 0 else 0.0


def shown_rows(rows: list[CheckRow], exercise: ExerciseSpec) -> list[CheckRow]:
    """The judge's rows as a student may see them: a hidden check's row rebuilt from its name,
    points and title alone (contract.hidden_failure when it failed), whatever the judge wrote."""
    hidden = {check.name for check in exercise.checks if not check.visible and not check.perf}
    shown = []
    for row in rows:
        if row.name in hidden:
            rebuilt = (
                CheckRow(name=row.name, passed=True, visible=False, message=contract.MESSAGES["check.passed"],
                         points=row.max_points, max_points=row.max_points, message_id="check.passed", title=row.title)
                if row.passed else contract.hidden_failure(row.name, row.max_points, row.title))
            if rebuilt != row:
                log.error("exercise %s: the judge wrote hidden check %s with more than its fixed form", exercise.id,
                          row.name)
            row = rebuilt
        shown.append(row)
    return shown


def unsettled_speed(verdict: Verdict, *, busy: bool) -> list[str]:
    """Why this verdict's speed cases must be measured again ([] when they need not): an
    interval that did not settle, or a wall-clock timing taken while the host was busy.
    Only when speed is what decides: every correctness check passed."""
    if verdict.is_internal_error or any(not c.passed for c in verdict.checks if not c.message_id.startswith("perf.")):
        return []
    cases = (verdict.perf or {}).get("cases") or []
    reasons = []
    if any(case.get("decision") == "undecided" for case in cases):
        reasons.append("undecided")
    if busy and any(case.get("clock") == "wall" and case.get("decision") in ("pass", "too_slow") for case in cases):
        reasons.append("busy")
    return reasons


def bundle_for(exercise: ExerciseSpec, code: str, seed: int, *, settle: bool = False) -> dict[str, bytes]:
    """Every file the judge needs, by relative path: the contract, the harness, the exercise,
    the submission; and the reference engines when the exercise's own code uses them."""
    shipped = ["harness", "engines"] if exercise.uses_engines else ["harness"]
    files = {
        f"grader/{path.relative_to(GRADER_DIR).as_posix()}": path.read_bytes()
        for folder in shipped
        for path in sorted((GRADER_DIR / folder).rglob("*.py"))
        if "__pycache__" not in path.parts
    }
    for module in ("__init__.py", "contract.py"):
        files[f"grader/{module}"] = (GRADER_DIR / module).read_bytes()
    manifest = manifest_for(exercise, seed, settle=settle)
    files[contract.MANIFEST_FILE] = json.dumps(manifest, indent=1).encode()
    files[contract.CHECKS_FILE] = exercise.checks_source.encode()
    files[contract.SOLUTION_FILE] = exercise.solution.encode()
    files[contract.SUBMISSION_FILE] = code.encode("utf-8", "surrogatepass")
    return files


def manifest_for(exercise: ExerciseSpec, seed: int, *, settle: bool = False) -> Manifest:
    return {
        "exercise": {"id": exercise.id, "version": exercise.version, "digest": exercise.digest},
        "seed": seed,
        "visible": exercise.visible_checks,
        "perf": {p.name: p.terms() for p in exercise.perf},
        "limits": dataclasses.asdict(exercise.limits),
        "settle": settle,
        "rules": [rule.terms() for rule in exercise.rules],
    }


def sandbox_limits(exercise: ExerciseSpec) -> Limits:
    """The whole run's limits: the student's own, plus room for the judge and the reference.

    The judge enforces the exercise's limits on the student's process itself and reports
    them per check; the sandbox's larger limits only catch what escapes that.
    """
    own = exercise.limits
    perf_s = sum(p.budget_s for p in exercise.perf)
    return dataclasses.replace(
        own,
        cpu_s=2 * own.cpu_s + 2 * perf_s + 30,  # student + reference, each may import torch
        wall_s=own.wall_s + 2 * perf_s + 60,
        memory_mb=2 * own.memory_mb + 512,
        pids=own.pids + 32,
        output_bytes=64 * 1024,  # the judge's own output; the student's goes to the judge
        files_bytes=2 * contract.RESULT_MAX_BYTES,
        tmpfs_mb=own.tmpfs_mb + 64,
    )


def verdict_from(outcome: Outcome, exercise: ExerciseSpec, key: bytes) -> Verdict:
    """Map what the sandbox reported, and the judge's result document, to a verdict.

    ``key`` is the secret the judge signed the document with; a document it does not
    prove is an alarm for the operators, never a verdict."""
    common: dict[str, Any] = {
        "usage": Usage(
            wall_s=round(outcome.wall_s, 3), cpu_s=round(outcome.cpu_s, 3), max_rss_bytes=outcome.max_rss_bytes
        ),
        "backend": outcome.backend,
        "exercise": {"id": exercise.id, "version": exercise.version, "digest": exercise.digest},
    }
    notes = list(outcome.notes)
    raw = outcome.files.get(f"{OUTPUT_DIR}/{contract.RESULT_FILE}")
    mac = outcome.files.get(f"{OUTPUT_DIR}/{contract.RESULT_MAC_FILE}")
    document, problem = None, "no result file"
    if raw is not None and mac is not None and not mac.strip():
        # The pages the judge reserved, never signed: it died before it wrote its result
        # (killed with the sandbox's bootstrap still alive). No one claimed to be the judge.
        raw, problem = None, "the judge died before it wrote its result"
    if raw is not None and not contract.proves_judge(raw, mac, key):
        log.critical("ALARM: exercise %s: a result file that the judge did not sign; not a verdict, retried",
                     exercise.id)
        return Verdict.internal_error("the result was not signed by the judge", notes=notes, **common)
    if raw is not None:
        try:
            document = ResultDocument.from_json(raw)
        except ContractError as error:
            problem = str(error)
    if document is None:
        document, said = died_after_hidden_input(outcome, exercise, key)
        common["operator_log"] = said
        if document is not None:
            # Read as the judge's own result, with what the run said before it ended: how the
            # sandbox ended (OOM-killed, a limit) is for the operators.
            notes = [note for note in notes if note != outcome.ending]
            document.operator_log = [*document.operator_log, *said]
    if document is None:
        if outcome.status in _OUTCOME_VERDICTS:
            # Which limit, without its numbers: the run may have been stopped after a hidden
            # input reached the student, whose process then chose how long and how much.
            kind = _OUTCOME_VERDICTS[outcome.status]
            return Verdict.without_checks(
                kind, f"the whole run was stopped: {_LIMIT_TEXTS[outcome.status]}", notes=notes,
                operator_log=[*common.pop("operator_log", []), f"the whole run was stopped: {_status_text(outcome)}"],
                **common
            )
        # The judge's stderr is a traceback that names hidden files: for the operators only.
        operator_log = [*common.pop("operator_log", []), *_judge_stderr(outcome)]
        log.error("the judge left no result: %s", operator_log)
        return Verdict.internal_error(
            f"the judge left no result this host can read ({problem}; {_status_text(outcome)})",
            notes=notes,
            operator_log=operator_log,
            **common,
        )
    common["usage"].fresh_imports = list(document.fresh_imports)
    if document.operator_log:
        log.warning("judge operator log: %s", document.operator_log)
    common["operator_log"] = list(document.operator_log)
    if document.internal_error is not None:
        return Verdict.internal_error("the judge failed: " + document.internal_error[-200:], notes=notes, **common)
    if not document.checks:
        return Verdict.internal_error("the judge reported no checks", notes=notes, **common)
    checks = shown_rows(document.checks, exercise)
    return Verdict(
        verdict=overall_kind(checks),
        score=score_of(checks),
        checks=checks,
        perf=document.perf,
        stdout=document.stdout,
        stderr=document.stderr,
        notes=document.notes + notes,
        **common,
    )


def died_after_hidden_input(
    outcome: Outcome, exercise: ExerciseSpec, key: bytes
) -> tuple[ResultDocument | None, list[str]]:
    """For a run that left no result: the judge's last checkpoint as its result when the sandbox
    died after a hidden input went out, and what the operators are told of it. None when no
    hidden input went out (no checkpoint: the death reads as what it was), when the run did not
    end in a way the student's process can cause, or when the checkpoint proves nothing.

    Why every such death reads the same as the hidden check failing: a process that saw a hidden
    input picks how it fails, and any sign of how (the verdict's kind, rows, score, notes, output,
    or a retry for a fault that is not one) would carry hidden data out. The sandbox's usage
    numbers (its wall time, CPU and peak memory) go to the operators only, as for every verdict;
    when the verdict comes stays the student's to choose, as a hidden check that sleeps to its
    time limit already does (README.md, invariant 4)."""
    if outcome.checkpoint is None:
        return None, []
    if outcome.status not in _DEATHS:
        return None, [f"the judge's checkpoint was not used: {_status_text(outcome)}"]
    raw = contract.open_checkpoint(outcome.checkpoint, key)
    if raw is None:
        # Only the judge holds the key: anything else on the channel is a trusted process
        # subverted. Not a verdict; the run reads as what the sandbox saw.
        log.critical("ALARM: exercise %s: a checkpoint that the judge did not sign; ignored", exercise.id)
        return None, ["ALARM: a checkpoint that the judge did not sign was ignored"]
    try:
        document = ResultDocument.from_json(raw)
    except ContractError as error:
        log.error("exercise %s: an unreadable checkpoint (%s); ignored", exercise.id, error)
        return None, [f"an unreadable checkpoint was ignored: {error}"]
    if document.internal_error is not None or not document.checks:
        return None, ["a checkpoint with no checks was ignored"]
    log.warning("exercise %s: the sandbox died after a hidden input (%s): read as a failed hidden check",
                exercise.id, _status_text(outcome))
    return document, [f"the sandbox died after a hidden input ({_status_text(outcome)}): "
                      "read as the judge's last checkpoint, a failed hidden check"]


def _status_text(outcome: Outcome) -> str:
    if outcome.status == "timeout":
        return f"time limit reached after {outcome.wall_s:.1f} s wall, {outcome.cpu_s:.1f} s CPU"
    if outcome.status == "memory":
        return f"memory limit reached ({outcome.max_rss_bytes // 2**20} MB)"
    if outcome.status == "output_limit":
        return "output limit reached"
    if outcome.status == "signal":
        return f"the judge was killed by signal {outcome.signal}"
    if outcome.status == "sandbox_error":
        return "the sandbox failed"
    return f"the judge exited with status {outcome.exit_code}"


def _judge_stderr(outcome: Outcome) -> list[str]:
    tail = outcome.stderr[-2000:].decode("utf-8", "replace").strip()
    return [f"judge stderr: {tail}"] if tail else []
