"""Host side of grading: pack a bundle, run the judge in a sandbox, read its one result.

    verdict = grade(load_exercise("exercises/coding/static-graph-executor"), code, get_sandbox("local"))

The judge inside the sandbox owns the result channel (``out/result.json``), which the
student's process cannot write. So a missing result is either a limit the sandbox enforced
on the whole run (the student's doing: TIME_LIMIT, MEMORY_LIMIT, OUTPUT_LIMIT) or our own
fault (INTERNAL_ERROR, retried).
"""
from __future__ import annotations

import dataclasses
import json
import logging
import secrets
from pathlib import Path
from typing import Any

from grader.spec import ExerciseSpec
from grader.verdict import CheckResult, Kind, Usage, Verdict, overall_kind, score_of
from sandbox.base import OUTPUT_DIR, Limits, Outcome, RunOptions, Sandbox

HARNESS_ARGV = ("python3", "-m", "grader.harness")
RESULT_FILE = "result.json"
RESULT_MAX_BYTES = 1 << 20
GRADER_DIR = Path(__file__).resolve().parent
UNISOLATED_ENV = "GRADER_UNISOLATED"  # the judge's name for it too (grader/harness/programs.py)
log = logging.getLogger(__name__)
_OUTCOME_VERDICTS = {"timeout": Kind.TIME_LIMIT, "memory": Kind.MEMORY_LIMIT, "output_limit": Kind.OUTPUT_LIMIT}


def grade(exercise: ExerciseSpec, code: str, sandbox: Sandbox, *, seed: int | None = None) -> Verdict:
    """Judge ``code`` against ``exercise`` in ``sandbox``. Raises SandboxUnavailable on infrastructure faults."""
    seed = secrets.randbits(63) if seed is None else seed
    # A sandbox in unisolated development mode cannot give the judge a second uid; the judge
    # is told, runs the student under its own uid, and the verdict carries a note.
    env = {UNISOLATED_ENV: "1"} if getattr(sandbox, "unisolated", False) else {}
    options = RunOptions(gpus=1 if exercise.gpu else None, env=env)
    outcome = sandbox.run(bundle_for(exercise, code, seed), argv=HARNESS_ARGV, limits=sandbox_limits(exercise), options=options)
    return verdict_from(outcome, exercise)


def bundle_for(exercise: ExerciseSpec, code: str, seed: int) -> dict[str, bytes]:
    """Every file the judge needs, by relative path: harness, engines, exercise, submission."""
    files = {
        f"grader/{path.relative_to(GRADER_DIR).as_posix()}": path.read_bytes()
        for folder in ("harness", "engines")
        for path in sorted((GRADER_DIR / folder).rglob("*.py"))
        if "__pycache__" not in path.parts
    }
    files["grader/__init__.py"] = (GRADER_DIR / "__init__.py").read_bytes()
    files["exercise/manifest.json"] = json.dumps(manifest_for(exercise, seed), indent=1).encode()
    files["exercise/checks.py"] = exercise.checks_source.encode()
    files["exercise/solution.py"] = exercise.solution.encode()
    files["submission/submission.py"] = code.encode("utf-8", "surrogatepass")
    return files


def manifest_for(exercise: ExerciseSpec, seed: int) -> dict[str, Any]:
    return {
        "exercise": {"id": exercise.id, "version": exercise.version, "digest": exercise.digest},
        "seed": seed,
        "visible": exercise.visible_checks,
        "perf": {p.name: p.to_dict() for p in exercise.perf},
        "limits": dataclasses.asdict(exercise.limits),
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
        files_bytes=2 * RESULT_MAX_BYTES,
        tmpfs_mb=own.tmpfs_mb + 64,
    )


def verdict_from(outcome: Outcome, exercise: ExerciseSpec) -> Verdict:
    """Map what the sandbox reported, and the judge's result document, to a verdict."""
    common = {
        "usage": Usage(wall_s=round(outcome.wall_s, 3), cpu_s=round(outcome.cpu_s, 3), max_rss_bytes=outcome.max_rss_bytes),
        "backend": outcome.backend,
        "exercise": {"id": exercise.id, "version": exercise.version, "digest": exercise.digest},
    }
    notes = list(outcome.notes)
    document, problem = _read_result(outcome)
    if document is None:
        if outcome.status in _OUTCOME_VERDICTS:
            kind = _OUTCOME_VERDICTS[outcome.status]
            return Verdict.without_checks(kind, f"the whole run was stopped: {_status_text(outcome)}", notes=notes, **common)
        operator_log = _judge_stderr(outcome)
        log.error("the judge left no result: %s", operator_log)
        return Verdict.internal_error(f"the judge left no result ({problem}; {_status_text(outcome)})", notes=notes,
                                      operator_log=operator_log, **common)
    operator_log = [str(line)[-4000:] for line in document.get("operator_log") or []][-20:]
    if operator_log:
        log.warning("judge operator log: %s", operator_log)
    common["operator_log"] = operator_log
    if document.get("internal_error"):
        return Verdict.internal_error("the judge failed: " + str(document["internal_error"])[-200:], notes=notes, **common)
    try:
        checks = [CheckResult.from_dict(row) for row in document["checks"]]
        perf = document.get("perf")
        if perf is not None and not isinstance(perf, dict):
            raise ValueError("perf is not an object")
    except (AttributeError, KeyError, TypeError, ValueError) as error:
        return Verdict.internal_error(f"the judge's result is malformed ({error})", notes=notes, **common)
    if not checks:
        return Verdict.internal_error("the judge reported no checks", notes=notes, **common)
    return Verdict(
        verdict=overall_kind(checks),
        score=score_of(checks),
        checks=checks,
        perf=perf,
        stdout=str(document.get("stdout", "")),
        stderr=str(document.get("stderr", "")),
        notes=[str(n) for n in document.get("notes", [])] + notes,
        **common,
    )


def _read_result(outcome: Outcome) -> tuple[dict[str, Any] | None, str]:
    raw = outcome.files.get(f"{OUTPUT_DIR}/{RESULT_FILE}", outcome.files.get(RESULT_FILE))
    if raw is None:
        return None, "no result file"
    if len(raw) > RESULT_MAX_BYTES:
        return None, f"a result file of {len(raw)} bytes"
    try:
        document = json.loads(raw)
    except (ValueError, RecursionError):
        return None, "the result file is not complete JSON"
    if not isinstance(document, dict) or document.get("format") != 1:
        return None, "the result file is not a result document"
    return document, ""


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
