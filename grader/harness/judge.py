"""The trusted judge: runs an exercise's checks against a submission and writes one result.

Inside the sandbox, started as ``python3 -m grader.harness`` in a folder holding::

    grader/                      this package (harness + engines)
    exercise/manifest.json       visible checks, perf thresholds, limits, the secret seed
    exercise/checks.py           the cases (hidden from the student)
    exercise/solution.py         the reference solution (hidden from the student)
    submission/submission.py     the student's code
    out/                         the result channel: only the judge writes result.json here

The judge reads the hidden files, starts the reference in one worker and the student in
another, calls into both, compares plain data, keeps the clock, and writes
out/result.json, signed with the run's secret (which the sandbox handed to the judge
alone). Neither worker holds privilege: the student runs as the uid the sandbox lent, the
reference as its trusted twin, each confined by the zygote in a home of its own, with
no capabilities; the student also under its own rlimits and the lent cgroup. Workers are
sent their program's source; neither can read the hidden files.

The order of the cases is the order of what the student may learn: visible checks, then
the performance cases (timed in a process that has never been sent a hidden input, so
its timings and answers can be shown), then the hidden checks, after which nothing the
student's process does is shown but whether each hidden check passed: a failed one reads
"a hidden check failed" and is a wrong answer, however it failed (contract.hidden_failure),
what the student printed from then on is cut whether or not there was any, and the host's
load is shown as it was before (``before_hidden_s``). Nothing the student prints is parsed.
Before each hidden input goes out, the judge hands the host a checkpoint (``checkpoint``): the
result this grading has if the sandbox dies from then on, that hidden check and every later
one failed, so a whole-sandbox death reads as any hidden failure (grader/host/pipeline.py).
Every row's message is a messages.Message. Judge tracebacks go to the result's
``operator_log`` (for the operators, never shown to students).
"""
from __future__ import annotations

import dataclasses
import importlib.util
import json
import math
import os
import random
import resource
import shutil
import statistics
import sys
import tempfile
import time
import traceback
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from grader import contract
from grader.contract import CheckRow, Kind, ResultDocument
from grader.harness import api, messages, rules, stats
from grader.harness.api import Case, CheckFailed, InProgram, ProgramError, ProgramStopped, Race
from grader.harness.messages import Message
from grader.harness.programs import (
    FILE_SIZE_LIMIT,
    OPERATOR_LOG,
    STUDENT_DESCRIPTORS,
    Capture,
    Family,
    OutputLimitExceeded,
    Process,
    Program,
    Remote,
    RemoteAttribute,
    cpu_clock_available,
    log_for_operators,
    privileged,
    reference_uid,
    student_uid,
)
from grader.harness.wire import MAX_FRAME_BYTES
from grader.harness.worker import HEAVY_MODULES
from sandbox.framing import CHECKPOINT_FD_ENV, PRELOADED_ENV, SECRET_FD_ENV, hand_checkpoint

if TYPE_CHECKING:
    from importlib.abc import Loader
    from importlib.machinery import ModuleSpec

FEEDBACK_BYTES = contract.FEEDBACK_BYTES
WARMUP_CALLS = 2
EFBIG = 27  # errno "File too large": RLIMIT_FSIZE, which Python meets as an OSError


@dataclasses.dataclass
class CaseOutcome:
    """How one case ended, before it becomes a row of the result."""

    passed: bool
    kind: str | None
    # shown for visible cases (and a perf case's measurement); a hidden case shows messages.hidden(kind)
    reason: Message
    perf: bool = False
    line: int | None = None  # of the student's submission.py, where its error points


class Judge:
    def __init__(self, root: Path):
        self.root = root
        self.manifest: dict[str, Any] = json.loads((root / contract.MANIFEST_FILE).read_text())
        self.limits: dict[str, Any] = self.manifest["limits"]
        self.seed = int(self.manifest["seed"])
        # The last attempt at this grading: an interval that never settles is decided by its
        # median (stats.settle) instead of being measured again.
        self.settle = bool(self.manifest["settle"])
        self.rules: list[contract.Rule] = list(self.manifest.get("rules", []))
        self.notes: list[str] = []
        self.isolated = privileged()
        self.hidden_started = False  # once true, nothing the student prints is kept
        self.began = time.monotonic()
        # Seconds from the judge's start to the first hidden input it sent (None: it sent none).
        self.before_hidden_s: float | None = None
        # Passes a checkpoint to the host, returning once the host holds it (main() sets it
        # where the sandbox gave a channel; a judge run by hand has none and needs none).
        self.hand_over: Callable[[ResultDocument], None] | None = None

    # -- setup ------------------------------------------------------------------------

    def prepare(self) -> None:
        self.private = Path(tempfile.mkdtemp(prefix="judge-"))  # 0700, root: the reference's stdout files
        self.lib = Path(tempfile.mkdtemp(prefix="lib-"))  # what the workers may read: the harness code
        shutil.copytree(
            self.root / "grader", self.lib / "grader", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        for folder, _, files in os.walk(self.lib):
            os.chmod(folder, 0o755)
            for name in files:
                os.chmod(os.path.join(folder, name), 0o644)
        if not self.isolated:
            self.notes.append(
                "unisolated development mode: the student's code ran under the judge's own uid, "
                "so it could read the hidden files; never use this mode for real submissions"
            )
        self.checks = self._load_checks()
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "OMP_NUM_THREADS": str(max(1, int(self.limits.get("cpus", 1)))),
            "MKL_NUM_THREADS": str(max(1, int(self.limits.get("cpus", 1)))),
        }
        memory = int(self.limits["memory_mb"]) * 2**20
        student_limits = {
            resource.RLIMIT_CPU: (
                int(self.limits["cpu_s"] + sum(p["budget_s"] for p in self.manifest["perf"].values())) + 1),
            resource.RLIMIT_DATA: memory,
            resource.RLIMIT_FSIZE: FILE_SIZE_LIMIT,  # files it writes; stdout and stderr are pipes, counted below
            resource.RLIMIT_CORE: 0,
            # Few descriptors: with no socket and no pipe grown past 64 KiB (sandbox/zygote.py's
            # filter), what the kernel buffers for the student stays within a few MB.
            resource.RLIMIT_NOFILE: STUDENT_DESCRIPTORS,
        }
        family = Family.for_sandbox(trusted=lambda: {self.reference_process.pid})
        if self.isolated and not family.limit_processes(int(self.limits["pids"])):
            # No lent cgroup (gVisor): RLIMIT_NPROC counts per uid, and the lent uid (or,
            # under gVisor, the sandbox's own kernel) makes the count this sandbox's alone.
            student_limits[resource.RLIMIT_NPROC] = int(self.limits["pids"])
        limit = int(self.limits["output_bytes"])
        self.outputs = {"stdout": Capture(FEEDBACK_BYTES + 1, limit), "stderr": Capture(FEEDBACK_BYTES + 1, limit)}
        self.student_process = Process(
            "student", self.root / contract.SUBMISSION_FILE, lib=self.lib, env=env,
            uid=student_uid() if self.isolated else None, untrusted=True, rlimits=student_limits,
            stdout=self.outputs["stdout"], stderr=self.outputs["stderr"],
            cgroups=family.join_files(), max_reply_bytes=min(memory, MAX_FRAME_BYTES), rules=self.rules,
        )
        self.reference_process = Process(
            "reference", self.root / contract.SOLUTION_FILE, lib=self.lib, env=env,
            uid=reference_uid() if self.isolated else None, untrusted=False, rlimits={resource.RLIMIT_CORE: 0},
            stdout=self.private / "reference.out", stderr=self.private / "reference.err",
        )
        self.student = Program("student", self.student_process, family)
        self.reference = Program("reference", self.reference_process, None, stopped_while_measured=family)
        self.reference.budget_s = 3600.0  # the sandbox's own wall limit is the real bound

    def _load_checks(self) -> list[Case]:
        api.CASES.clear()
        # a .py path always has a spec, with a source loader
        spec = cast("ModuleSpec", importlib.util.spec_from_file_location("checks", self.root / contract.CHECKS_FILE))
        module = importlib.util.module_from_spec(spec)
        sys.modules["checks"] = module
        cast("Loader", spec.loader).exec_module(module)
        visible = set(self.manifest["visible"])
        cases = list(api.CASES)
        for case in cases:
            case.visible = case.name in visible
        # What the student may see first: once a hidden case starts, nothing more of what its
        # process does is shown, so the timed cases run before any hidden input exists for it.
        return (
            [c for c in cases if c.visible and not c.is_perf]
            + [c for c in cases if c.is_perf]
            + [c for c in cases if not c.visible and not c.is_perf]
        )

    # -- the run ----------------------------------------------------------------------

    def run(self) -> ResultDocument:
        self.prepare()
        try:
            self.reference.start(timeout=600)
        except (ProgramError, ProgramStopped) as error:
            raise RuntimeError(f"the reference solution did not load: {error}") from None
        self.student.budget_s = float(self.limits["wall_s"])
        return self._document(self._run_all())

    def _document(self, rows: list[CheckRow]) -> ResultDocument:
        perf = {"cases": self.perf_reports, "before_hidden_s": self.before_hidden_s} if self.perf_reports else None
        return ResultDocument(
            checks=rows,
            perf=perf,
            stdout=self._feedback(self.outputs["stdout"]),
            stderr=self._feedback(self.outputs["stderr"]),
            notes=list(self.notes),
            isolated=self.isolated,
            operator_log=OPERATOR_LOG[-20:],
            fresh_imports=self._fresh_imports(),
        )

    def checkpoint(self, rows: list[CheckRow]) -> None:
        """Hand the host the result of a sandbox that dies from now on, before a hidden input goes out.

        Without it, a student that filled the whole sandbox's memory after it saw a hidden input
        (gVisor bounds no process family's memory) made the verdict MEMORY_LIMIT with no rows
        instead of a failed hidden check: one bit per grading. With it, that death reads as this
        hidden check and every later one failing, rows the student could have had by failing
        them in any other way; everything else of the document is what the final one would
        say, since nothing of it changes after the first hidden input (the student's output is
        sealed, the speed cases ran before, and notes come only while its code loads)."""
        if self.hand_over is None:
            return
        pending = self.checks[len(rows):]
        died = [_row(case, CaseOutcome(False, contract.HIDDEN_FAILURE_KIND, Message(contract.HIDDEN_FAILED)))
                for case in pending]
        self.hand_over(self._document(rows + died))

    def _fresh_imports(self) -> list[str]:
        """Heavy modules imported during this grading rather than inherited from the preload."""
        preloaded = os.environ.get(PRELOADED_ENV, "").split(",")
        mine = [f"judge:{m}" for m in HEAVY_MODULES if m in sys.modules and m not in preloaded]
        return mine + [f"{side.side}:{m}" for side in (self.reference, self.student) for m in side.fresh_imports]

    def _run_all(self) -> list[CheckRow]:
        self.perf_reports: list[dict[str, Any]] = []
        stopped = self._load_student()  # once set, every remaining case ends this way
        correctness_failed = False
        rows: list[CheckRow] = []
        for case in self.checks:
            if stopped is not None:
                outcome = stopped
            elif case.is_perf and correctness_failed:
                outcome = CaseOutcome(False, "WRONG_ANSWER", Message("not_run.correctness_failed"))
            else:
                if not case.visible and not self.hidden_started:
                    # From here on nothing the student prints is kept: it could hold hidden inputs.
                    self.hidden_started = True
                    for capture in self.outputs.values():
                        capture.seal()
                    self.before_hidden_s = round(time.monotonic() - self.began, 3)
                if not case.visible and not case.is_perf:
                    self.checkpoint(rows)
                outcome = self._run_perf(case) if case.is_perf else self._run_check(case)
                correctness_failed |= not outcome.passed and not case.is_perf
                if self._printed_too_much():
                    outcome = stopped = CaseOutcome(
                        False, "OUTPUT_LIMIT", Message("stop.output_limit", limit=int(self.limits["output_bytes"])))
                    self.student.stop()
            rows.append(_row(case, outcome))
        self.student.stop()
        return rows

    def _load_student(self) -> CaseOutcome | None:
        """None when the student's module loaded; otherwise how every case ends.

        A limit hit while loading is named as that limit: a MemoryError (RLIMIT_DATA) is
        MEMORY_LIMIT, a write refused as too large (RLIMIT_FSIZE) or too much printed is
        OUTPUT_LIMIT. (A student can only misreport its own failure by faking the name.)
        """
        refused = rules.refusal(self._student_source(), self.rules)
        if refused is not None:
            return CaseOutcome(False, "WRONG_ANSWER", refused)
        try:
            self.student.start(self.student.call_timeout())
            if self._printed_too_much():
                raise ProgramStopped(
                    "student", "OUTPUT_LIMIT", Message("stop.output_limit", limit=int(self.limits["output_bytes"])))
            return None
        except ProgramError as error:
            if getattr(error, "syntax", False):
                note = f"SyntaxError: {error.message}"
                self.notes.append(note)
                return CaseOutcome(False, "SYNTAX_ERROR", Message("not_run.syntax_error", error=note), line=error.line)
            note = _traceback_text(error)
            self.notes.append(note)
            refused = rules.refused_import(error.type_name, error.message, self.rules)
            if refused is not None:
                return CaseOutcome(False, "WRONG_ANSWER", refused)
            if error.type_name == "MemoryError":
                return CaseOutcome(
                    False, "MEMORY_LIMIT", Message("not_run.stopped", reason=Message("stop.memory_limit"), error=note),
                    line=error.line)
            if getattr(error, "errno", None) == EFBIG:
                limit = Message("stop.file_too_large", limit=FILE_SIZE_LIMIT)
                return CaseOutcome(
                    False, "OUTPUT_LIMIT", Message("not_run.stopped", reason=limit, error=note), line=error.line)
            return CaseOutcome(False, "RUNTIME_ERROR", Message("not_run.load_error", error=note), line=error.line)
        except ProgramStopped as error:
            self.student.stop()
            note = f"while loading your code: {error.message}"
            self.notes.append(note)
            return CaseOutcome(False, error.kind, Message("not_run.stopped", reason=error.reason, error=note))

    def _student_source(self) -> str:
        return (self.root / contract.SUBMISSION_FILE).read_bytes().decode("utf-8", "replace")

    def _rng(self, case: Case) -> np.random.Generator:
        return np.random.default_rng([self.seed, zlib.crc32(case.name.encode())])

    def _run_check(self, case: Case) -> CaseOutcome:
        try:
            case.function(Remote(self.student, 0), Remote(self.reference, 0), self._rng(case))
            return CaseOutcome(True, None, Message("check.passed"))
        except CheckFailed as failure:
            return CaseOutcome(False, "WRONG_ANSWER", failure.reason)
        except ProgramError as error:
            if error.side != "student":
                raise RuntimeError(f"check {case.name}: the reference raised {_traceback_text(error)}") from None
            return _student_error(error, self.rules)
        except ProgramStopped as stop:
            if stop.side != "student":
                raise RuntimeError(f"check {case.name}: the reference stopped: {stop.message}") from None
            return CaseOutcome(False, stop.kind, stop.reason)
        except Exception:  # noqa: BLE001 - a check choking on what the student returned
            return _unusable_value(case)

    # -- performance --------------------------------------------------------------------

    def _run_perf(self, case: Case) -> CaseOutcome:
        spec = self.manifest["perf"][case.name]
        report: dict[str, Any] = {
            "name": case.name, "baseline": spec["baseline"], "at_most": spec["at_most"], "speedup": spec.get("speedup"),
        }
        self.perf_reports.append(report)
        rng = self._rng(case)
        self.student.budget_s = max(self.student.budget_s, 0) + float(self.limits["wall_s"])  # setup calls of this case
        try:
            race = case.function(Remote(self.student, 0), Remote(self.reference, 0), rng)
            if not isinstance(race, Race):
                raise RuntimeError(f"perf case {case.name} must return a Race, got {type(race).__name__}")
            baseline = race.baseline(spec["baseline"])
            decision = self._race(race, baseline, spec, rng, report)
        except CheckFailed as failure:
            report["decision"] = "wrong_answer"
            return CaseOutcome(False, "WRONG_ANSWER", failure.reason)
        except ProgramError as error:
            if error.side != "student":
                raise RuntimeError(f"perf case {case.name}: the reference raised {_traceback_text(error)}") from None
            report["decision"] = "error"
            return _student_error(error, self.rules)
        except ProgramStopped as stop:
            if stop.side != "student":
                raise RuntimeError(f"perf case {case.name}: the reference stopped: {stop.message}") from None
            report["decision"] = "too_slow" if stop.kind == "TIME_LIMIT" else "error"
            kind = "TOO_SLOW" if stop.kind == "TIME_LIMIT" else stop.kind
            return CaseOutcome(False, kind, stop.reason)
        except Exception:  # noqa: BLE001 - a check choking on what the student returned
            report["decision"] = "error"
            return _unusable_value(case)
        finally:
            if self.student.process.alive:
                cast(Family, self.student.family).thaw()  # the student's program always has one
        slower_every_time = (report["fastest_ratio"] or 0) > spec["at_most"] * (1 + spec["margin"])
        if (decision.outcome == "too_few" and report["student_busy_s"] < float(spec["budget_s"])
                and not slower_every_time):
            # The student's own time did not use the budget, and it was not slower on every
            # pair measured: the baseline, the machine or the judge used it. Ours to retry.
            raise RuntimeError(
                f"perf case {case.name}: {report['n']} pairs in {report['elapsed_s']} s, "
                f"the student's share {report['student_busy_s']} s")
        reason = _perf_message(report)
        if decision.outcome == "pass":
            return CaseOutcome(True, None, reason, perf=True)
        return CaseOutcome(False, "TOO_SLOW", reason, perf=True)  # too slow, too few, or undecided (measured again)

    def _race(
        self, race: Race, baseline: Any, spec: dict[str, Any], rng: np.random.Generator, report: dict[str, Any]
    ) -> stats.Decision:
        """Time student and baseline in pairs, in random order, on the same fresh inputs.

        A side's time for one call is everything that side's program is asked to do for it:
        the race's setup (which may call into the program, e.g. to build a fresh graph) and
        the call itself. Its clock is the case's: "cpu" counts the CPU every task of that
        side uses meanwhile (what a busy machine cannot inflate), "wall" the seconds of its
        exchanges on the judge's clock; a sandbox that shows no per-task CPU (gVisor), or a
        window in which a task was born or ended where no cgroup counts the CPU of the tasks
        that ended, falls back to the wall clock, plus the CPU its processes were seen to use
        beyond it, pooled over the case (tasks working side by side use more than the
        wall shows; stats.CpuBeyondWall), and the report says which clock decided. Warm-up
        pairs come first, under the case's own setup allowance; then stats.run measures until
        a look decides or the budget ends.
        The student runs only inside its own windows: it is frozen before the first and
        after each. Every grading follows this one pattern: a leaderboard's re-measurement
        is a grading like any other, so no code can tell the two apart.
        """
        budget = float(spec["budget_s"])
        compare = race.check or api.close
        order = random.Random(self.seed ^ 0x5EED)
        family = cast(Family, self.student.family)  # the student's program always has one
        self.student.ensure_started()
        family.freeze()
        modules = {"student": Remote(self.student, 0), "baseline": Remote(self.reference, 0)}
        programs = {"student": self.student, "baseline": _program_of(baseline) or self.reference}
        busy = {"student": 0.0, "baseline": 0.0}  # each side's own seconds: calls, setup, freezing
        clock = spec.get("clock", "cpu")
        in_programs = _program_of(race.student) is not None and _program_of(baseline) is not None
        use_cpu = clock == "cpu" and in_programs and cpu_clock_available()
        fell_back = {"windows": 0}
        beyond_wall = {"student": stats.CpuBeyondWall(), "baseline": stats.CpuBeyondWall()}
        cpu_floor = {"windows": 0}  # windows charged the CPU beyond their wall time

        def timed(side: str, args: tuple[Any, ...], timeout: float | None) -> tuple[Any, float, float]:
            function = race.student if side == "student" else baseline
            before = time.perf_counter()
            try:
                # The window is all the student runs for this call: from the thaw to the
                # freeze, its setup and the release of what setup made included.
                with programs[side].stopwatch() as watch:
                    if side == "student":
                        family.thaw()
                    try:
                        own = race.setup(modules[side], args) if race.setup else args
                        value, call_s = _timed(function, own, timeout=timeout if side == "student" else 3600)
                        if race.setup:
                            _release(own)
                    finally:
                        if side == "student" and self.student.process.alive:
                            family.freeze()
            finally:
                # Everything around a side's call is its own: a slow setup or freeze included.
                busy[side] += time.perf_counter() - before
            wall = watch.wall_s if _program_of(function) is not None else call_s + watch.wall_s
            if use_cpu and watch.cpu_s is not None:
                return value, watch.cpu_s, wall
            if use_cpu:
                fell_back["windows"] += 1
            if clock == "cpu" and in_programs:
                # Where the wall clock decides, it is no upper bound of the CPU that tasks working
                # side by side use: what their processes' ticks prove beyond it is added.
                beyond_wall[side].add(wall, watch.ticks_cpu_s)
                extra = beyond_wall[side].extra_s()
                if extra > 0:
                    cpu_floor["windows"] += 1
                return value, wall + extra, wall
            return value, wall, wall

        walls: list[tuple[float, float]] = []

        def pair(label: messages.Localized, timeout: float | None) -> tuple[float, float]:
            args = race.inputs(rng)
            sides = ["student", "baseline"]
            order.shuffle(sides)
            results = {side: timed(side, args, timeout) for side in sides}
            try:
                compare(results["student"][0], results["baseline"][0])
            except CheckFailed as failure:
                raise CheckFailed(failure.reason.within(label)) from None
            walls.append((results["student"][2], results["baseline"][2]))
            return results["student"][1], results["baseline"][1]

        # Warm-ups: outside the budget, charged to the case's setup allowance (timeout None).
        student_first, baseline_first = pair(messages.PHRASES["first_call"], None)
        report["student_compile_s"], report["baseline_compile_s"] = student_first, baseline_first
        for i in range(WARMUP_CALLS - 1):
            pair(messages.localize(messages.PHRASES["warmup_call"], n=i + 2), None)
        busy.update(student=0.0, baseline=0.0)
        walls.clear()
        beyond_wall.update(student=stats.CpuBeyondWall(), baseline=stats.CpuBeyondWall())
        cpu_floor["windows"] = 0
        measured = stats.run(
            lambda: pair(messages.localize(messages.PHRASES["timed_call"], n=len(walls) + 1), budget),
            budget_s=budget, at_most=spec["at_most"], margin=spec["margin"], settle_undecided=self.settle,
            own_time=lambda: busy["student"],
        )
        decision, pairs = measured.decision, measured.pairs
        ratios = [s / b for s, b in pairs if b > 0]
        report.update(
            decision=decision.outcome,
            settled_by_median=decision.settled,
            clock="cpu" if use_cpu else "wall",
            wall_fallbacks=fell_back["windows"],
            cpu_over_wall=cpu_floor["windows"],
            ratio=_round(decision.ratio),
            median_ratio=_round(decision.median),
            total_ratio=_round(decision.total_ratio),
            interval=[_round(decision.interval.low), _round(decision.interval.high)],
            confidence=round(decision.interval.confidence, 4),
            n=decision.n,
            needed=stats.MIN_PAIRS,
            student_median_s=_round(statistics.median(s for s, _ in pairs)) if pairs else None,
            baseline_median_s=_round(statistics.median(b for _, b in pairs)) if pairs else None,
            student_wall_median_s=_round(statistics.median(s for s, _ in walls)) if walls else None,
            baseline_wall_median_s=_round(statistics.median(b for _, b in walls)) if walls else None,
            fastest_ratio=_round(min(ratios)) if ratios else None,
            student_busy_s=round(busy["student"], 3),
            baseline_busy_s=round(busy["baseline"], 3),
            elapsed_s=round(measured.elapsed_s, 3),
            budget_s=budget,
        )
        return decision

    # -- output -------------------------------------------------------------------------

    def _printed_too_much(self) -> bool:
        for capture in self.outputs.values():
            try:
                capture.drain()
            except OutputLimitExceeded:
                return True
        return False

    def _feedback(self, capture: Capture) -> str:
        """What the student printed, up to the first hidden case (hidden inputs must not leak)."""
        cut = capture.total if capture.sealed_at is None else capture.sealed_at
        text = bytes(capture.kept[:FEEDBACK_BYTES]).decode("utf-8", "replace")
        if cut > FEEDBACK_BYTES:
            text += f"\n[... {cut - FEEDBACK_BYTES} more bytes not shown]"
        if self.hidden_started and cut:
            # Said whether or not anything came then (that it did would tell of a hidden input),
            # beside what came before.
            text += "\n[output printed during hidden checks is not shown]"
        return text


def _program_of(function: Any) -> Program | None:
    """The program a race's function runs in; None for a function the judge runs itself."""
    if isinstance(function, InProgram):
        return cast(Program, function.program)
    if isinstance(function, RemoteAttribute):
        return function.program
    if isinstance(function, Remote):
        return function._program
    return None


def _timed(function: Any, args: tuple[Any, ...], timeout: float | None) -> tuple[Any, float]:
    """Call ``function(*args)`` and measure it on the judge's clock, wherever it runs.

    ``timeout`` None: the program's own call budget limits the call, and pays for it."""
    if isinstance(function, InProgram):
        program: Program = function.program
        return program.timed_call(None, None, (function.function, *args), {}, timeout=timeout)
    if isinstance(function, RemoteAttribute):
        return function.program.timed_call(function.owner._number, function.name, args, {}, timeout=timeout)
    if isinstance(function, Remote):
        return function._program.timed_call(function._number, None, args, {}, timeout=timeout)
    start = time.perf_counter()
    value = function(*args)
    return value, time.perf_counter() - start


def _release(args: Any) -> None:
    """Release the handles a race's setup made, program by program."""
    handles: dict[Program, list[int]] = {}
    todo = [args]
    while todo:
        value = todo.pop()
        if isinstance(value, Remote) and value._number != 0:
            handles.setdefault(value._program, []).append(value._number)
        elif isinstance(value, list | tuple):
            todo.extend(value)
    for program, numbers in handles.items():
        program.release(numbers)


def _row(case: Case, outcome: CaseOutcome) -> CheckRow:
    """One check row. A failed hidden check is contract.hidden_failure, whatever the outcome."""
    title = {k: v for k, v in (case.title or {}).items() if k in contract.LANGUAGES and isinstance(v, str)}
    if not case.visible and not case.is_perf and not outcome.passed:
        return contract.hidden_failure(case.name, case.points, title)
    if case.visible or outcome.perf:
        shown = outcome.reason
    else:  # a hidden check that passed, or a performance case that failed other than by its measurement
        shown = Message("check.passed") if outcome.passed else messages.hidden(outcome.kind)
    compared = case.visible and shown.id.startswith("compare.")
    return CheckRow(
        name=case.name,
        passed=outcome.passed,
        visible=bool(case.visible),
        points=case.points if outcome.passed else 0.0,
        max_points=case.points,
        kind=Kind(outcome.kind) if outcome.kind else None,
        **shown.row_fields(),
        title=title,
        expected=str(shown.params["expected"]) if compared and "expected" in shown.params else None,
        got=str(shown.params["got"]) if compared and "got" in shown.params else None,
        line=outcome.line if case.visible else None,
    )


def _unusable_value(case: Case) -> CaseOutcome:
    log_for_operators(f"check {case.name} raised while handling the student's values")
    return CaseOutcome(False, "RUNTIME_ERROR", Message("error.unusable_value"))


def _student_error(error: ProgramError, exercise_rules: list[contract.Rule]) -> CaseOutcome:
    refused = rules.refused_import(error.type_name, error.message, exercise_rules)
    if refused is not None:
        return CaseOutcome(False, "WRONG_ANSWER", refused)
    kind = "MEMORY_LIMIT" if error.type_name == "MemoryError" else "RUNTIME_ERROR"
    return CaseOutcome(
        False, kind,
        Message("error.raised", traceback=_traceback_text(error), type=error.type_name, line=error.line or 0),
        line=error.line)


def _traceback_text(error: ProgramError) -> str:
    head = f"{error.type_name}: {error.message}" if error.message else error.type_name
    return f"{error.traceback}{head}" if error.traceback else head


def _perf_message(report: dict[str, Any]) -> Message:
    # Numbers and the baseline's name only: the platform words them in the reader's language.
    common = {"at_most": f"{report['at_most']:.3g}", "baseline": report["baseline"]}
    if report["decision"] == "too_few":
        return Message(
            "perf.too_few_pairs", n=report["n"], budget=f"{report['budget_s']:g}", needed=report["needed"], **common)
    low, high = report["interval"]
    outcome = report["decision"]
    if report.get("settled_by_median"):
        outcome += "_by_median"
    ratio = {"ratio": f"{report['ratio']:.3g}", "low": f"{low:.3g}", "high": f"{high:.3g}", "n": report["n"]}
    return Message(f"perf.{outcome}", **ratio, **common)


def _round(value: float) -> float | None:
    return float(f"{value:.4g}") if math.isfinite(value) else None  # JSON has no NaN


# --- the result channel -------------------------------------------------------------------


def take_secret() -> bytes:
    """The run's secret, read once from the descriptor the sandbox handed this process alone."""
    fd = os.environ.pop(SECRET_FD_ENV, "")
    if not fd.isdigit():
        return b""  # a judge no sandbox started (tests, tools): its result proves nothing
    with os.fdopen(int(fd), "rb") as pipe:
        return pipe.read(4096)


def take_checkpoint_channel() -> int | None:
    """The descriptor the sandbox handed this process alone to pass checkpoints on; None without one."""
    fd = os.environ.pop(CHECKPOINT_FD_ENV, "")
    return int(fd) if fd.isdigit() else None


def checkpoint_sender(fd: int, key: bytes) -> Callable[[ResultDocument], None]:
    def hand_over(document: ResultDocument) -> None:
        if not hand_checkpoint(fd, contract.seal_checkpoint(document.to_json(), key)):
            # No hidden input goes out unless a death from then on reads as a hidden failure.
            raise RuntimeError("the sandbox did not take the judge's checkpoint")
    return hand_over


def reserve_result(out: Path) -> Path:
    """Take the result's pages up front, so that a student filling the disk cannot stop the result."""
    out.mkdir(exist_ok=True)
    os.chmod(out, 0o700)
    path = out / contract.RESULT_FILE
    for reserved, size in ((path, contract.RESULT_MAX_BYTES), (out / contract.RESULT_MAC_FILE, 64)):
        with open(reserved, "wb") as file:
            file.write(b" " * size)
    return path


def write_result(path: Path, document: ResultDocument, key: bytes) -> None:
    data = document.to_json()
    for target, content in ((path, data), (path.with_name(contract.RESULT_MAC_FILE), contract.result_mac(data, key))):
        with open(target, "r+b") as file:  # overwrite pages we already own
            file.write(content)
            file.truncate(len(content))


def main(argv: list[str]) -> int:
    """``python3 -m grader.harness OUT_DIR``: judge the bundle in the current folder, the result into OUT_DIR."""
    key = take_secret()
    channel = take_checkpoint_channel()
    root = Path.cwd()
    result = reserve_result(root / argv[0])
    judge = None
    try:
        judge = Judge(root)
        if channel is not None:
            judge.hand_over = checkpoint_sender(channel, key)
        document = judge.run()
    except BaseException:  # noqa: B036 - whatever happens, the host gets a document
        # The traceback names lines of the hidden checks: for the operators only.
        document = ResultDocument(
            checks=[],
            notes=judge.notes if judge else [],
            internal_error="the judge failed; the operators have the details",
            operator_log=[*OPERATOR_LOG[-19:], traceback.format_exc(limit=20)[-4000:]],
        )
    finally:
        if judge is not None and hasattr(judge, "student"):
            judge.student.stop()
            judge.reference.stop()
    write_result(result, document, key)
    return 0
