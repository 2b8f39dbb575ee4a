"""The trusted judge: runs an exercise's checks against a submission and writes one result.

Inside the sandbox, started as ``python3 -m grader.harness`` in a folder holding::

    grader/                      this package (harness + engines)
    exercise/manifest.json       visible checks, perf thresholds, limits, the secret seed
    exercise/checks.py           the cases (hidden from the student)
    exercise/solution.py         the reference solution (hidden from the student)
    submission/submission.py     the student's code
    out/                         the result channel: only the judge writes result.json here

The judge reads the hidden files, starts the reference in one worker and the student in
another (uid 65534, no capabilities, own rlimits), calls into both, compares plain data,
keeps the clock, and writes out/result.json. Nothing the student prints is parsed.
"""
from __future__ import annotations

import dataclasses
import importlib.util
import json
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
from pathlib import Path
from typing import Any

import numpy as np

from grader import contract
from grader.contract import CheckRow, Kind, ResultDocument
from grader.harness import api, stats
from grader.harness.api import Case, CheckFailed, ProgramError, ProgramStopped, Race
from grader.harness.programs import (
    FILE_SIZE_LIMIT,
    Family,
    Process,
    Program,
    Remote,
    RemoteAttribute,
    become_subreaper,
    privileged,
)

WARMUP_CALLS = 2
HIDDEN_MESSAGES = {
    "WRONG_ANSWER": "wrong answer on a hidden case",
    "TIME_LIMIT": "time limit reached on a hidden case",
    "MEMORY_LIMIT": "memory limit reached on a hidden case",
    "OUTPUT_LIMIT": "too much output on a hidden case",
}


@dataclasses.dataclass
class Outcome:
    """How one case ended, before it becomes a row of the result."""

    passed: bool
    kind: Kind | None = None
    message: str = ""  # shown for visible cases
    hidden_message: str = ""  # shown for hidden ones: never an input or an expected value


class Judge:
    def __init__(self, root: Path):
        self.root = root
        self.manifest: dict[str, Any] = json.loads((root / contract.MANIFEST_FILE).read_text())
        self.limits: dict[str, Any] = self.manifest["limits"]
        self.seed = int(self.manifest["seed"])
        self.notes: list[str] = []
        self.isolated = privileged()
        self.hidden_offsets: dict[str, int] | None = None  # output sizes when the first hidden case began

    # -- setup ------------------------------------------------------------------------

    def prepare(self) -> None:
        become_subreaper()
        self.private = Path(tempfile.mkdtemp(prefix="judge-"))  # 0700, root: stdout files, reference cwd
        self.lib = Path(tempfile.mkdtemp(prefix="lib-"))  # what the student may read: harness code, own file
        self.home = Path(tempfile.mkdtemp(prefix="student-"))  # the student's cwd and only writable place
        shutil.copytree(self.root / "grader", self.lib / "grader", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        shutil.copyfile(self.root / contract.SUBMISSION_FILE, self.lib / "submission.py")
        for folder, _, files in os.walk(self.lib):
            os.chmod(folder, 0o755)
            for name in files:
                os.chmod(os.path.join(folder, name), 0o644)
        if self.isolated:
            # The judge holds no CAP_CHOWN; the student is the only other uid in the sandbox,
            # and the judge never reads from this folder, so world-writable is enough.
            os.chmod(self.home, 0o777)
        else:
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
            resource.RLIMIT_CPU: int(self.limits["cpu_s"] + sum(p["budget_s"] for p in self.manifest["perf"].values())) + 1,
            resource.RLIMIT_DATA: memory,
            resource.RLIMIT_FSIZE: max(FILE_SIZE_LIMIT, int(self.limits["output_bytes"])),
            resource.RLIMIT_CORE: 0,
        }
        if self.isolated:  # counts every process of uid 65534, which here are the student's alone
            student_limits[resource.RLIMIT_NPROC] = int(self.limits["pids"])
        self.student_process = Process(
            "student", self.lib / "submission.py", lib=self.lib, cwd=self.home, env=dict(env, HOME=str(self.home), TMPDIR=str(self.home)),
            as_student=True, rlimits=student_limits, stdout=self.private / "student.out", stderr=self.private / "student.err",
        )
        self.reference_process = Process(
            "reference", self.root / contract.SOLUTION_FILE, lib=self.lib, cwd=self.private, env=dict(env, HOME=str(self.private)),
            as_student=False, rlimits={resource.RLIMIT_CORE: 0}, stdout=self.private / "reference.out", stderr=self.private / "reference.err",
        )
        family = Family(
            os.getpid(),
            trusted=lambda: {self.reference_process.pid},
            workers=lambda: {self.reference_process.pid, self.student_process.pid},
        )
        self.student = Program("student", self.student_process, family)
        self.reference = Program("reference", self.reference_process, None)
        self.reference.budget_s = 3600.0  # the sandbox's own wall limit is the real bound

    def _load_checks(self) -> list[Case]:
        api.CASES.clear()
        spec = importlib.util.spec_from_file_location("checks", self.root / contract.CHECKS_FILE)
        module = importlib.util.module_from_spec(spec)
        sys.modules["checks"] = module
        spec.loader.exec_module(module)
        visible = set(self.manifest["visible"])
        cases = list(api.CASES)
        for case in cases:
            case.visible = case.name in visible
        # Visible cases first: once a hidden case starts, no more student output is shown.
        return [c for c in cases if c.visible and not c.is_perf] + [c for c in cases if not c.visible and not c.is_perf] + [
            c for c in cases if c.is_perf
        ]

    # -- the run ----------------------------------------------------------------------

    def run(self) -> ResultDocument:
        self.prepare()
        try:
            self.reference.start(timeout=600)
        except (ProgramError, ProgramStopped) as error:
            raise RuntimeError(f"the reference solution did not load: {error}") from None
        self.student.budget_s = float(self.limits["wall_s"])
        rows = self._run_all()
        return ResultDocument(
            checks=rows,
            perf={"cases": self.perf_reports} if self.perf_reports else None,
            stdout=self._feedback(self.private / "student.out"),
            stderr=self._feedback(self.private / "student.err"),
            notes=self.notes,
            isolated=self.isolated,
        )

    def _run_all(self) -> list[CheckRow]:
        self.perf_reports: list[dict[str, Any]] = []
        stopped = self._load_student()  # once set, every remaining case ends this way
        correctness_failed = False
        rows = []
        for case in self.checks:
            if stopped is not None:
                outcome = stopped
            elif case.is_perf and correctness_failed:
                outcome = Outcome(False, Kind.WRONG_ANSWER, "not run: a correctness check failed", "not run: a correctness check failed")
            else:
                if not case.visible and self.hidden_offsets is None:
                    self.hidden_offsets = {name: _size(self.private / name) for name in ("student.out", "student.err")}
                outcome = self._run_perf(case) if case.is_perf else self._run_check(case)
                correctness_failed |= not outcome.passed and not case.is_perf
                if self._printed_too_much():
                    message = f"your program printed more than {self.limits['output_bytes']} bytes"
                    outcome = stopped = Outcome(False, Kind.OUTPUT_LIMIT, message, message)
                    self.student.stop()
            rows.append(
                CheckRow(
                    name=case.name,
                    passed=outcome.passed,
                    visible=bool(case.visible),
                    message=outcome.message if case.visible else (outcome.hidden_message or outcome.message),
                    points=case.points if outcome.passed else 0.0,
                    max_points=case.points,
                    kind=outcome.kind,
                )
            )
        self.student.stop()
        return rows

    def _load_student(self) -> Outcome | None:
        try:
            self.student.start(self.student.call_timeout())
            return None
        except ProgramError as error:
            if getattr(error, "syntax", False):
                self.notes.append(f"SyntaxError: {error.message}")
                return Outcome(False, Kind.SYNTAX_ERROR, "not run: your code has a syntax error", "not run: your code has a syntax error")
            self.notes.append(_traceback_text(error))
            message = "not run: your code raised an error while loading"
            return Outcome(False, Kind.RUNTIME_ERROR, message, message)
        except ProgramStopped as error:
            self.notes.append(f"while loading your code: {error.message}")
            return Outcome(False, Kind(error.kind), f"not run: {error.message}", f"not run: {error.message}")

    def _rng(self, case: Case) -> np.random.Generator:
        return np.random.default_rng([self.seed, zlib.crc32(case.name.encode())])

    def _run_check(self, case: Case) -> Outcome:
        try:
            case.function(Remote(self.student, 0), Remote(self.reference, 0), self._rng(case))
            return Outcome(True, None, "passed")
        except CheckFailed as failure:
            return Outcome(False, Kind.WRONG_ANSWER, str(failure), HIDDEN_MESSAGES["WRONG_ANSWER"])
        except ProgramError as error:
            if error.side != "student":
                raise RuntimeError(f"check {case.name}: the reference raised {_traceback_text(error)}") from None
            return _student_error(error)
        except ProgramStopped as stop:
            if stop.side != "student":
                raise RuntimeError(f"check {case.name}: the reference stopped: {stop.message}") from None
            return Outcome(False, Kind(stop.kind), stop.message, HIDDEN_MESSAGES.get(stop.kind, stop.message))

    # -- performance --------------------------------------------------------------------

    def _run_perf(self, case: Case) -> Outcome:
        spec = self.manifest["perf"][case.name]
        report: dict[str, Any] = {"name": case.name, "baseline": spec["baseline"], "at_most": spec["at_most"], "speedup": spec.get("speedup")}
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
            return Outcome(False, Kind.WRONG_ANSWER, str(failure), HIDDEN_MESSAGES["WRONG_ANSWER"])
        except ProgramError as error:
            if error.side != "student":
                raise RuntimeError(f"perf case {case.name}: the reference raised {_traceback_text(error)}") from None
            report["decision"] = "error"
            return _student_error(error)
        except ProgramStopped as stop:
            if stop.side != "student":
                raise RuntimeError(f"perf case {case.name}: the reference stopped: {stop.message}") from None
            report["decision"] = "too_slow" if stop.kind == "TIME_LIMIT" else "error"
            kind = Kind.TOO_SLOW if stop.kind == Kind.TIME_LIMIT else Kind(stop.kind)
            return Outcome(False, kind, stop.message, stop.message)
        finally:
            self.student.family.thaw()
        message = _perf_message(report)
        if decision.outcome == "too_slow":
            return Outcome(False, Kind.TOO_SLOW, message, message)
        return Outcome(True, None, message, message)

    def _race(self, race: Race, baseline: Any, spec: dict[str, Any], rng: np.random.Generator, report: dict[str, Any]) -> stats.Decision:
        """Time student and baseline in pairs, in random order, on the same fresh inputs."""
        budget = float(spec["budget_s"])
        started = time.monotonic()
        compare = race.check or api.close
        order = random.Random(self.seed ^ 0x5EED)
        family = self.student.family
        self.student.ensure_started()

        def timed(side: str, args: tuple[Any, ...]) -> tuple[Any, float]:
            if side == "student":
                left = max(budget - (time.monotonic() - started), 0.05)
                family.thaw()  # the student runs only inside its own timed window
                try:
                    return _timed(race.student, args, timeout=left)
                finally:
                    family.freeze()
            return _timed(baseline, args, timeout=3600)

        def pair(label: str) -> tuple[float, float]:
            args = race.inputs(rng)
            sides = ["student", "baseline"]
            order.shuffle(sides)
            results = {side: timed(side, args) for side in sides}
            try:
                compare(results["student"][0], results["baseline"][0])
            except CheckFailed as failure:
                raise CheckFailed(f"{label}: {failure}") from None
            return results["student"][1], results["baseline"][1]

        student_first, baseline_first = pair("the first timed call")
        report["student_compile_s"], report["baseline_compile_s"] = student_first, baseline_first
        for i in range(WARMUP_CALLS - 1):
            pair(f"warm-up call {i + 2}")
        pairs: list[tuple[float, float]] = []
        decision = stats.decide([], spec["at_most"], spec["margin"], final=False)
        for look in stats.LOOKS:
            while len(pairs) < look and time.monotonic() - started < budget:
                pairs.append(pair(f"timed call {len(pairs) + 1}"))
            out_of_time = time.monotonic() - started >= budget
            ratios = [s / b for s, b in pairs if b > 0]
            decision = stats.decide(ratios, spec["at_most"], spec["margin"], final=out_of_time or look == stats.LOOKS[-1])
            if decision.outcome != "undecided" or out_of_time:
                break
        if decision.outcome == "undecided":
            decision = dataclasses.replace(decision, outcome="within_noise")
        report.update(
            decision=decision.outcome,
            ratio=_round(decision.ratio),
            interval=[_round(decision.interval.low), _round(decision.interval.high)],
            confidence=round(decision.interval.confidence, 4),
            n=decision.n,
            student_median_s=_round(statistics.median(s for s, _ in pairs)) if pairs else None,
            baseline_median_s=_round(statistics.median(b for _, b in pairs)) if pairs else None,
            elapsed_s=round(time.monotonic() - started, 3),
            budget_s=budget,
        )
        return decision

    # -- output -------------------------------------------------------------------------

    def _printed_too_much(self) -> bool:
        limit = int(self.limits["output_bytes"])
        return any(_size(self.private / name) > limit for name in ("student.out", "student.err"))

    def _feedback(self, path: Path) -> str:
        """What the student printed, up to the first hidden case (hidden inputs must not leak)."""
        if not path.exists():
            return ""
        data = path.read_bytes()
        cut = len(data) if self.hidden_offsets is None else min(len(data), self.hidden_offsets[path.name])
        text = contract.cap_text(data[:cut])
        if cut < len(data):
            text += "\n[output printed during hidden checks is not shown]"
        return text


def _timed(function: Any, args: tuple[Any, ...], timeout: float) -> tuple[Any, float]:
    """Call ``function(*args)`` and measure it on the judge's clock, wherever it runs."""
    if isinstance(function, RemoteAttribute):
        return function.program.timed_call(function.owner._number, function.name, args, {}, timeout=timeout)
    if isinstance(function, Remote):
        return function._program.timed_call(function._number, None, args, {}, timeout=timeout)
    start = time.perf_counter()
    value = function(*args)
    return value, time.perf_counter() - start


def _student_error(error: ProgramError) -> Outcome:
    kind = Kind.MEMORY_LIMIT if error.type_name == "MemoryError" else Kind.RUNTIME_ERROR
    where = f" at line {error.line}" if error.line else ""
    return Outcome(False, kind, _traceback_text(error), f"your code raised {error.type_name}{where}")


def _traceback_text(error: ProgramError) -> str:
    head = f"{error.type_name}: {error.message}" if error.message else error.type_name
    return f"{error.traceback}{head}" if error.traceback else head


def _perf_message(report: dict[str, Any]) -> str:
    threshold = f"at least {report['speedup']:g}x faster than" if report.get("speedup") else f"at most {report['at_most']:g}x the time of"
    low, high = report["interval"]
    measured = f"{report['ratio']:.3g}x the {report['baseline']} time (interval {low:.3g}-{high:.3g}, n={report['n']})"
    if report["decision"] == "pass":
        return f"fast enough: {measured}; needed {threshold} the {report['baseline']}"
    if report["decision"] == "too_slow":
        return f"too slow: {measured}; needed {threshold} the {report['baseline']}"
    return f"within noise: {measured}; needed {threshold} the {report['baseline']}; not counted against you"


def _round(value: float) -> float:
    return float(f"{value:.4g}")


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


# --- the result channel -------------------------------------------------------------------


def reserve_result(out: Path) -> Path:
    """Take the result's pages up front, so that a student filling the disk cannot stop the result."""
    out.mkdir(exist_ok=True)
    os.chmod(out, 0o700)
    path = out / contract.RESULT_FILE
    with open(path, "wb") as file:
        file.write(b" " * contract.RESULT_MAX_BYTES)
    return path


def write_result(path: Path, document: ResultDocument) -> None:
    data = document.to_json()
    with open(path, "r+b") as file:  # overwrite pages we already own
        file.write(data)
        file.truncate(len(data))


def main(argv: list[str]) -> int:
    """``python3 -m grader.harness OUT_DIR``: judge the bundle in the current folder, the result into OUT_DIR."""
    root = Path.cwd()
    result = reserve_result(root / argv[0])
    judge = None
    try:
        judge = Judge(root)
        document = judge.run()
    except BaseException:  # noqa: B036 - whatever happens, the host gets a document
        document = ResultDocument(
            checks=[],
            notes=judge.notes if judge else [],
            internal_error=traceback.format_exc(limit=20)[-4000:],
        )
    finally:
        if judge is not None and hasattr(judge, "student"):
            judge.student.stop()
            judge.reference.stop()
    write_result(result, document)
    return 0
