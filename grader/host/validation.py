"""Proving content before students see it.

    report = validate_exercise(Path("exercises/coding/scalar-autograd"), sandbox)
    report.ok            # the solution ACCEPTED, the starter not, every mutant its declared verdict

Pure Python with no Django: the ``validate_content`` management command, CI and the
instructors' upload page all call these same functions, so an uploaded zip (see
archive.py) is validated exactly like a folder in git.

Every program of every exercise is one independent grading, so ``jobs`` of them run at once
(``default_jobs()``: the cores here over one sandbox's CPU share), with the quiz snippets and
the lessons' blocks in the same bounded runner. Reports come out in content order and the
same whatever ``jobs`` is. What measures time is graded alone: the solution (and any program
declared ACCEPTED) of an exercise with performance checks, a program declared TOO_SLOW or
TIME_LIMIT, and every second attempt; a ratio to the reference is then measured with no
other grading of ours sharing the cores, as on a quiet worker.
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import heapq
import itertools
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, Future
from pathlib import Path
from typing import Any, TypeVar

from grader.content_root import exercise_folders
from grader.contract import Kind
from grader.host import pipeline
from grader.host.spec import ExerciseSpec, SpecError, load_exercise
from grader.host.verdict import Verdict
from grader.lessons import validate_lessons
from grader.quizzes import validate_all
from sandbox import Limits, Sandbox

T = TypeVar("T")

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
    lessons: dict[str, list[str]] | None = None  # problems by lesson; None when not validated
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        exercises_ok = all(e.ok for e in self.exercises)
        quizzes_ok = not any(self.quizzes.values()) if self.quizzes else True
        lessons_ok = not any(self.lessons.values()) if self.lessons else True
        return exercises_ok and quizzes_ok and lessons_ok

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "seconds": round(self.seconds, 2),
            "exercises": [e.to_dict() for e in self.exercises],
            "quizzes": self.quizzes,
            "lessons": self.lessons,
        }


def gpu_present() -> bool:
    """Whether this host can give a sandbox an NVIDIA GPU (GRAPHDOJO_GPU=0/1 overrides)."""
    forced = os.environ.get("GRAPHDOJO_GPU")
    if forced in ("0", "1"):
        return forced == "1"
    return Path("/dev/nvidiactl").exists() and shutil.which("nvidia-smi") is not None


def validate_exercise(
    path: Path, sandbox: Sandbox, *, gpu: bool | None = None, seed: int | None = None,
    grade: Callable[..., Verdict] = pipeline.grade, jobs: int = 1,
) -> ExerciseReport:
    """Load ``path`` and prove it in ``sandbox``: solution ACCEPTED, starter not, mutants as declared.

    ``jobs`` gradings run at once (see :class:`Runner`); the report is the same whatever it is.
    """
    with Runner(jobs) as runner:
        validation = _Validation(sandbox, runner, gpu=gpu, seed=seed, grade=grade)
        report = validation.plan(Path(path))
        validation.wait()
    return report


def _programs(spec: ExerciseSpec) -> Iterable[tuple[str, str, str]]:
    yield "solution", spec.solution, str(Kind.ACCEPTED)
    yield "starter", spec.starter, f"not {Kind.ACCEPTED}"
    for mutant in spec.mutants:
        yield f"mutant:{mutant.name}", mutant.code, str(mutant.expected)


def _timing_sensitive(spec: ExerciseSpec, expected: str) -> bool:
    """Whether the verdict ``expected`` of a program hangs on a measurement of time: a timing
    verdict, or ACCEPTED where the exercise has performance checks the program must pass."""
    kind = expected.removeprefix("not ")
    return kind in _TIMING_KINDS or (bool(spec.perf) and expected == str(Kind.ACCEPTED))


def _prove(
    spec: ExerciseSpec,
    sandbox: Sandbox,
    grade: Callable[..., Verdict],
    program: str,
    code: str,
    expected: str,
    seed: int | None,
    runner: Runner | None = None,
) -> RunReport:
    # Timing-sensitive programs are graded alone (no other grading of this validation in
    # flight), so a ratio to the reference is measured as it would be on a quiet worker; and
    # so is every second attempt.
    alone = _timing_sensitive(spec, expected)
    seconds = 0.0
    attempts = 0
    while True:
        attempts += 1
        with runner.slot(alone=alone) if runner is not None else contextlib.nullcontext():
            started = time.monotonic()
            try:
                verdict = grade(spec, code, sandbox, seed=seed)
            finally:
                seconds += time.monotonic() - started
        ok = _meets(verdict.verdict, expected) and _refused_by_its_rule(spec, program, verdict)
        # A platform fault proves nothing either way, and a timing verdict on a busy machine
        # may be noise: both are measured once more (with a fresh seed, alone) before they count.
        retry = (
            not ok
            and attempts < 2
            and (
                verdict.verdict == Kind.INTERNAL_ERROR or verdict.verdict in _TIMING_KINDS or expected in _TIMING_KINDS
            )
        )
        if not retry:
            break
        alone = True
    return RunReport(
        program=program,
        expected=expected,
        got=str(verdict.verdict),
        ok=ok,
        seconds=round(seconds, 2),
        detail="" if ok else _detail(verdict),
        attempts=attempts,
    )


def _refused_by_its_rule(spec: ExerciseSpec, program: str, verdict: Verdict) -> bool:
    """A mutant that proves a rule ([[rules]] mutants = [...]) must be refused by that rule, by name."""
    names = {name for rule in spec.rules if program in {f"mutant:{m}" for m in rule.mutants}
             for name in (*rule.modules, *rule.attributes, *rule.calls)}
    if not names:
        return True
    return any(check.message_id in ("rules.refused", "rules.refused_import")
               and check.message_params.get("api") in names for check in verdict.checks)


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
    lessons: bool | None = None,
    jobs: int = 1,
    seed: int | None = None,
    progress: Callable[[ExerciseReport, int, int], None] | None = None,
) -> ContentReport:
    """Validate every exercise (or those named) and, with no slugs named, every quiz bank and lesson.

    Up to ``jobs`` sandbox runs go at once (see :class:`Runner`, and :func:`default_jobs` for
    the cores here); the report is in content order and the same whatever ``jobs`` is.
    ``seed`` fixes the judge's seed for every grading (default: a fresh one each time).
    ``progress(exercise, done, total)`` is called once per exercise as it finishes (from
    whichever thread finished it, one call at a time).
    """
    started = time.monotonic()
    slugs = list(slugs)
    report = ContentReport()
    folders = exercise_folders(content_dir, slugs)
    with Runner(jobs) as runner:
        validation = _Validation(sandbox, runner, gpu=gpu, seed=seed, progress=progress, total=len(folders))
        report.exercises = [validation.plan(folder) for folder in folders]
        validation.start()
        # The snippets and the lessons' blocks queue behind or among the gradings (by lane), and
        # these calls wait for their own runs only.
        if quizzes if quizzes is not None else not slugs:
            report.quizzes = _validate_quizzes(Path(content_dir), sandbox, Lane(runner, _QUIZ_LANE), jobs)
        if lessons if lessons is not None else not slugs:
            report.lessons = _validate_lessons(Path(content_dir), sandbox, Lane(runner, _LESSON_LANE))
        validation.wait()
    report.seconds = time.monotonic() - started
    return report


def _validate_quizzes(content_dir: Path, sandbox: Sandbox, executor: Executor, runs: int) -> dict[str, list[str]]:
    try:
        problems = validate_all(content_dir, sandbox, executor=executor, runs=runs)
    except Exception as error:  # the quiz loader's own failure is a content failure to report
        return {"exercises/quizzes": [f"{type(error).__name__}: {error}"]}
    return {str(name): list(messages) for name, messages in problems.items()}


def _validate_lessons(content_dir: Path, sandbox: Sandbox, executor: Executor) -> dict[str, list[str]]:
    try:
        problems = validate_lessons(content_dir, sandbox, executor=executor)
    except Exception as error:  # a sandbox fault while running a block: say so, like the quizzes
        return {"exercises/lessons": [f"{type(error).__name__}: {error}"]}
    return {str(name): list(messages) for name, messages in problems.items()}


# --- running many at once ---------------------------------------------------------------

# Lanes: lower runs first. Timing-sensitive gradings first (they run alone, so the machine is
# otherwise idle: better at the start than as a tail), then the long snippet runs, the other
# gradings, and the short lesson blocks last, to fill the end evenly.
_ALONE_LANE, _QUIZ_LANE, _GRADING_LANE, _LESSON_LANE = range(4)


def available_cores() -> float:
    """The CPUs this process may use: its affinity, bounded by its cgroup's CPU quota if any."""
    try:
        cores = float(len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        cores = float(os.cpu_count() or 1)
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max":
            cores = min(cores, int(quota) / int(period))
    except (OSError, ValueError):
        pass
    return cores


def default_jobs(share: float | None = None) -> int:
    """How many gradings fit at once: the cores here over one sandbox's CPU share (at least 1)."""
    share = Limits().cpus if share is None else share
    return max(1, int(available_cores() / share + 1e-9))


class Runner(Executor):
    """At most ``jobs`` tasks at once, taken by lane (lower first), then in submission order.

    A task that measures time can also hold the runner ``alone`` (:meth:`slot`): it waits
    until no other task is inside a slot, and holds back new ones until it is done. Tasks
    submitted through :meth:`submit` (or a :class:`Lane`) run inside a shared slot.
    """

    def __init__(self, jobs: int) -> None:
        if jobs < 1:
            raise ValueError(f"jobs must be at least 1, got {jobs}")
        self.jobs = jobs
        self._queue: list[tuple[int, int, Future[Any], Callable[[], Any]]] = []
        self._order = itertools.count()
        self._tasks = threading.Condition()
        self._gate = threading.Condition()
        self._inside = 0  # tasks in a shared slot
        self._alone = False
        self._waiting_alone = 0
        self._closed = False
        self._threads = [
            threading.Thread(target=self._work, name=f"validate-{n}", daemon=True) for n in range(jobs)
        ]
        for thread in self._threads:
            thread.start()

    def put(self, fn: Callable[[], T], lane: int = _GRADING_LANE) -> Future[T]:
        """Queue ``fn`` (which takes its own slots) in ``lane``."""
        future: Future[T] = Future()
        with self._tasks:
            if self._closed:
                raise RuntimeError("the runner is shut down")
            heapq.heappush(self._queue, (lane, next(self._order), future, fn))
            self._tasks.notify()
        return future

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        return Lane(self, _GRADING_LANE).submit(fn, *args, **kwargs)

    @contextlib.contextmanager
    def slot(self, *, alone: bool = False) -> Iterator[None]:
        """Hold a place for one sandbox run; ``alone``: with no other run of this runner in flight."""
        with self._gate:
            if alone:
                self._waiting_alone += 1
                while self._inside or self._alone:
                    self._gate.wait()
                self._waiting_alone -= 1
                self._alone = True
            else:
                while self._alone or self._waiting_alone:
                    self._gate.wait()
                self._inside += 1
        try:
            yield
        finally:
            with self._gate:
                if alone:
                    self._alone = False
                else:
                    self._inside -= 1
                self._gate.notify_all()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._tasks:
            self._closed = True
            if cancel_futures:
                for _, _, future, _ in self._queue:
                    future.cancel()
                self._queue.clear()
            self._tasks.notify_all()
        if wait:
            for thread in self._threads:
                thread.join()

    def __exit__(self, kind: object, error: object, traceback: object) -> None:
        # On an error (Ctrl-C included), drop what has not started instead of running it all first.
        self.shutdown(wait=True, cancel_futures=error is not None)

    def _work(self) -> None:
        while True:
            with self._tasks:
                while not self._queue and not self._closed:
                    self._tasks.wait()
                if not self._queue:
                    return
                _, _, future, fn = heapq.heappop(self._queue)
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = fn()
            except BaseException as error:  # handed to whoever waits on the future
                future.set_exception(error)
            else:
                future.set_result(result)


class Lane(Executor):
    """A :class:`Runner` seen as a plain Executor whose tasks queue in one lane, each in a shared slot."""

    def __init__(self, runner: Runner, lane: int) -> None:
        self.runner = runner
        self.lane = lane

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        def in_a_slot() -> T:
            with self.runner.slot():
                return fn(*args, **kwargs)

        return self.runner.put(in_a_slot, self.lane)


@dataclasses.dataclass
class _Pending:
    """An exercise whose runs are queued: filled in by the last of them to finish."""

    report: ExerciseReport
    runs: list[RunReport | None]
    errors: list[str]
    left: int
    seconds: float = 0.0


class _Validation:
    """Exercises planned into one runner: one task per program, reports filled in as they end."""

    def __init__(
        self, sandbox: Sandbox, runner: Runner, *, gpu: bool | None, seed: int | None,
        grade: Callable[..., Verdict] = pipeline.grade,
        progress: Callable[[ExerciseReport, int, int], None] | None = None, total: int = 1,
    ) -> None:
        self.sandbox, self.runner, self.gpu, self.seed, self.grade = sandbox, runner, gpu, seed, grade
        self.progress = progress
        self.total = total
        self.done = 0
        self._lock = threading.Lock()
        self._tasks: list[tuple[tuple[Any, ...], Callable[[], None]]] = []
        self._futures: list[Future[None]] = []

    def plan(self, path: Path) -> ExerciseReport:
        """The exercise's report, complete now when nothing is to run, else once :meth:`wait` returns."""
        started = time.monotonic()
        try:
            spec = load_exercise(path)
        except SpecError as error:
            return self._finished(
                ExerciseReport(slug=path.name, ok=False, error=str(error), seconds=time.monotonic() - started))
        report = ExerciseReport(slug=spec.slug, ok=True, title=dict(spec.title))
        if spec.gpu and not (gpu_present() if self.gpu is None else self.gpu):
            report.skipped = (
                "needs a GPU (gpu = true in exercise.toml) and this host has none; it is validated where one is present"
            )
            report.seconds = time.monotonic() - started
            return self._finished(report)
        programs = list(_programs(spec))
        _ = spec.uses_engines  # parsed here, once: the worker threads then never build an AST (see spec._parse)
        pending = _Pending(report, [None] * len(programs), [""] * len(programs), len(programs))
        limits = pipeline.sandbox_limits(spec)
        # Runs of one container shape go together, so a warm pool keeps few shapes at once.
        shape = (limits.memory_mb, limits.pids, limits.cpus, limits.tmpfs_mb)
        for index, (program, code, expected) in enumerate(programs):
            alone = _timing_sensitive(spec, expected)
            key = (_ALONE_LANE if alone else _GRADING_LANE, shape, len(self._tasks))
            self._tasks.append((key, functools.partial(self._run, pending, index, spec, program, code, expected)))
        return report

    def start(self) -> None:
        """Queue every planned run."""
        for key, task in sorted(self._tasks, key=lambda item: item[0]):
            self._futures.append(self.runner.put(task, key[0]))
        self._tasks.clear()

    def wait(self) -> None:
        """Start what is planned and return once every run has been reported."""
        self.start()
        for future in self._futures:
            future.result()

    def _run(self, pending: _Pending, index: int, spec: ExerciseSpec, program: str, code: str, expected: str) -> None:
        started = time.monotonic()
        try:
            run = _prove(spec, self.sandbox, self.grade, program, code, expected, self.seed, self.runner)
        except Exception as error:  # SandboxUnavailable and friends: say so, the other runs go on
            pending.errors[index] = f"{program}: {type(error).__name__}: {error}"
            seconds = time.monotonic() - started
        else:
            pending.runs[index] = run
            seconds = run.seconds
        with self._lock:
            pending.seconds += seconds
            pending.left -= 1
            if pending.left:
                return
        report = pending.report
        report.runs = [run for run in pending.runs if run is not None]
        report.error = "\n".join(error for error in pending.errors if error)
        report.ok = not report.error and all(run.ok for run in report.runs)
        report.seconds = pending.seconds
        self._finished(report)

    def _finished(self, report: ExerciseReport) -> ExerciseReport:
        with self._lock:
            self.done += 1
            if self.progress is not None:
                self.progress(report, self.done, self.total)
        return report
