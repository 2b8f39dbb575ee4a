"""Proving content before students see it.

    report = validate_exercise(Path("exercises/coding/scalar-autograd"), sandbox)
    report.ok            # the solution ACCEPTED, the starter not, every mutant its declared verdict

Pure Python with no Django: the ``validate_content`` management command, CI and the
instructors' upload page all call these same functions, so an uploaded zip (see
archive.py) is validated exactly like a folder in git.
"""
from __future__ import annotations

import dataclasses
import os
import shutil
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from grader.content_root import exercise_folders
from grader.contract import Kind
from grader.host import pipeline
from grader.host.spec import ExerciseSpec, SpecError, load_exercise
from grader.host.verdict import Verdict
from grader.quizzes import validate_all
from sandbox import Sandbox

# Verdicts that depend on timing: a disagreement there is measured once more before it counts.
_TIMING_KINDS = {Kind.TOO_SLOW, Kind.TIME_LIMIT}


# --- validating exercises ---------------------------------------------------------------


@dataclasses.dataclass
class RunReport:
    """One program graded against its exercise: the solution, the starter, or a mutant."""

    program: str  # "solution", "starter", "mutant:<name>"
    expected: str  # a verdict, or "not ACCEPTED" for the starter
    got: str
    ok: bool
    seconds: float
    detail: str = ""  # the failing checks, or the judge's notes, when ok is False
    attempts: int = 1

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass
class ExerciseReport:
    slug: str
    ok: bool
    error: str = ""  # why the folder itself is invalid (SpecError), or the sandbox failed
    skipped: str = ""  # why it was not run here (e.g. it needs a GPU and none is present)
    runs: list[RunReport] = dataclasses.field(default_factory=list)
    seconds: float = 0.0
    title: dict[str, str] = dataclasses.field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "slug": self.slug,
            "ok": self.ok,
            "error": self.error,
            "skipped": self.skipped,
            "seconds": round(self.seconds, 2),
            "title": dict(self.title),
            "runs": [run.to_dict() for run in self.runs],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ExerciseReport:
        runs = [RunReport(**run) for run in data.get("runs", [])]
        return cls(
            slug=str(data["slug"]), ok=bool(data["ok"]), error=str(data.get("error", "")),
            skipped=str(data.get("skipped", "")), runs=runs, seconds=float(data.get("seconds", 0.0)),
            title=dict(data.get("title") or {}),
        )


@dataclasses.dataclass
class ContentReport:
    exercises: list[ExerciseReport] = dataclasses.field(default_factory=list)
    quizzes: dict[str, list[str]] | None = None  # problems by quiz file; None when not validated
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        exercises_ok = all(e.ok for e in self.exercises)
        quizzes_ok = not any(self.quizzes.values()) if self.quizzes else True
        return exercises_ok and quizzes_ok

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "seconds": round(self.seconds, 2),
            "exercises": [e.to_dict() for e in self.exercises],
            "quizzes": self.quizzes,
        }


def gpu_present() -> bool:
    """Whether this host can give a sandbox an NVIDIA GPU (GRAPHDOJO_GPU=0/1 overrides)."""
    forced = os.environ.get("GRAPHDOJO_GPU")
    if forced in ("0", "1"):
        return forced == "1"
    return Path("/dev/nvidiactl").exists() and shutil.which("nvidia-smi") is not None


def validate_exercise(
    path: Path, sandbox: Sandbox, *, gpu: bool | None = None, seed: int | None = None,
    grade: Callable[..., Verdict] = pipeline.grade,
) -> ExerciseReport:
    """Load ``path`` and prove it in ``sandbox``: solution ACCEPTED, starter not, mutants as declared."""
    started = time.monotonic()
    path = Path(path)
    try:
        spec = load_exercise(path)
    except SpecError as error:
        return ExerciseReport(slug=path.name, ok=False, error=str(error), seconds=time.monotonic() - started)
    report = ExerciseReport(slug=spec.slug, ok=True, title=dict(spec.title))
    if spec.gpu and not (gpu_present() if gpu is None else gpu):
        report.skipped = (
            "needs a GPU (gpu = true in exercise.toml) and this host has none; it is validated where one is present"
        )
        report.seconds = time.monotonic() - started
        return report
    try:
        for program, code, expected in _programs(spec):
            report.runs.append(_prove(spec, sandbox, grade, program, code, expected, seed))
    except Exception as error:  # SandboxUnavailable and friends: say so, keep going with the rest
        report.error = f"{type(error).__name__}: {error}"
    report.ok = not report.error and all(run.ok for run in report.runs)
    report.seconds = time.monotonic() - started
    return report


def _programs(spec: ExerciseSpec) -> Iterable[tuple[str, str, str]]:
    yield "solution", spec.solution, str(Kind.ACCEPTED)
    yield "starter", spec.starter, f"not {Kind.ACCEPTED}"
    for mutant in spec.mutants:
        yield f"mutant:{mutant.name}", mutant.code, str(mutant.expected)


def _prove(
    spec: ExerciseSpec,
    sandbox: Sandbox,
    grade: Callable[..., Verdict],
    program: str,
    code: str,
    expected: str,
    seed: int | None,
) -> RunReport:
    started = time.monotonic()
    attempts = 0
    while True:
        attempts += 1
        verdict = grade(spec, code, sandbox, seed=seed)
        ok = _meets(verdict.verdict, expected)
        # A platform fault proves nothing either way, and a timing verdict on a busy machine
        # may be noise: both are measured once more (with a fresh seed) before they count.
        retry = (
            not ok
            and attempts < 2
            and (
                verdict.verdict == Kind.INTERNAL_ERROR or verdict.verdict in _TIMING_KINDS or expected in _TIMING_KINDS
            )
        )
        if not retry:
            break
    return RunReport(
        program=program,
        expected=expected,
        got=str(verdict.verdict),
        ok=ok,
        seconds=round(time.monotonic() - started, 2),
        detail="" if ok else _detail(verdict),
        attempts=attempts,
    )


def _meets(got: Kind, expected: str) -> bool:
    if got == Kind.INTERNAL_ERROR:
        return False
    if expected.startswith("not "):
        return got != Kind(expected.removeprefix("not "))
    return got == Kind(expected)


def _detail(verdict: Verdict) -> str:
    lines = [
        f"{check.name}: {check.kind or 'FAILED'}: {check.message.strip()[:300]}"
        for check in verdict.checks
        if not check.passed
    ]
    # A judge traceback says what went wrong at its end.
    lines += [note if len(note) <= 800 else "..." + note[-800:] for note in verdict.notes]
    return "\n".join(lines)[:4000]


def validate_content(
    content_dir: Path,
    sandbox: Sandbox,
    *,
    slugs: Iterable[str] = (),
    gpu: bool | None = None,
    quizzes: bool | None = None,
    progress: Callable[[ExerciseReport], None] | None = None,
) -> ContentReport:
    """Validate every exercise (or those named) and, when the loader exists, every quiz bank."""
    started = time.monotonic()
    slugs = list(slugs)
    report = ContentReport()
    for folder in exercise_folders(content_dir, slugs):
        exercise = validate_exercise(folder, sandbox, gpu=gpu)
        report.exercises.append(exercise)
        if progress is not None:
            progress(exercise)
    if quizzes is None:
        quizzes = not slugs
    if quizzes:
        report.quizzes = _validate_quizzes(Path(content_dir), sandbox)
    report.seconds = time.monotonic() - started
    return report


def _validate_quizzes(content_dir: Path, sandbox: Sandbox) -> dict[str, list[str]]:
    try:
        problems = validate_all(content_dir, sandbox)
    except Exception as error:  # the quiz loader's own failure is a content failure to report
        return {"exercises/quizzes": [f"{type(error).__name__}: {error}"]}
    return {str(name): list(messages) for name, messages in problems.items()}
