"""False accepts and false rejects of speed verdicts, on a quiet machine and under load.

A loop exercise with threshold "at most 3x the reference" (the margin in the student's
favour makes 3.15x the line): right solutions doing 1x (the reference), 2x, 3x (at the
limit) and 8x the reference's work, each graded BENCH_RUNS times (default 10) with 0, 2
and 4 other gradings running beside them on the same sandbox, and with 4 gradings plus
two busy processes. The first three must always be ACCEPTED (anything else is a false
reject), the 8x one never (a false accept). Each grading is the platform's: an interval
that does not settle is measured again once, and then the median decides. We report the
verdicts, how often a grading was measured again, and the time to a verdict.

    python -m bench judge           (BENCH_BACKEND=local|docker|auto, BENCH_RUNS=10, BENCH_LOADS=0,2,4,4+busy)
"""
from __future__ import annotations

import collections
import json
import multiprocessing
import multiprocessing.synchronize
import os
import statistics
import tempfile
import threading
import time
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from grader.contract import Kind
from grader.host.pipeline import grade
from grader.host.spec import DEFAULT_MARGIN, ExerciseSpec, load_exercise
from sandbox import Sandbox, get_sandbox

RESULTS = Path(__file__).resolve().parent / "results"
THRESHOLD = 3.0
BUDGET_S = 6
WORK = 200_000  # loop iterations per call: ~15 ms, so the judge's fixed per-call overhead is ~1%
FACTORS = {"reference (1x work)": 1.0, "2x slower": 2.0, "3x slower (at the limit)": 3.0, "8x slower": 8.0}
LOADS = {"0": (0, False), "2": (2, False), "4": (4, False), "4+busy": (4, True)}
BUSY_PROCESSES = 2


def toml(threshold: float = THRESHOLD) -> str:
    return f"""\
id = "bench-loop"
version = 1
difficulty = "easy"
tags = ["bench"]
points = 1
[title]
en = "Loop"
zh-hans = "循环"
[summary]
en = "A loop to time."
zh-hans = "用于计时的循环。"
[limits]
cpu_s = 30
wall_s = 60
[perf.loop]
baseline = "reference"
at_most = {threshold}
budget_s = {BUDGET_S}
"""


CHECKS = f"""\
from grader.harness import Race, check, close, perf

@check()
def same_result(student, reference, rng):
    close(student.work(1000), reference.work(1000))

@perf()
def loop(student, reference, rng):
    return Race(student=student.work, reference=reference.work,
                inputs=lambda rng: (int(rng.integers({WORK}, {WORK} + 100)),))
"""
SOLUTION = """\
def work(n):
    total = 0
    for i in range(n):
        total += i * i % 7
    return total
"""


def submission(factor: float) -> str:
    """The reference's answer, plus (factor - 1) times its work again, thrown away."""
    return (
        "def work(n):\n"
        "    total = 0\n"
        "    for i in range(n):\n"
        "        total += i * i % 7\n"
        "    waste = 0\n"
        f"    for i in range(int(n * {factor - 1.0!r})):\n"
        "        waste += i * i % 7\n"
        "    return total\n"
    )


def exercise_folder(root: Path, threshold: float = THRESHOLD) -> Path:
    folder = root / "bench-loop"
    folder.mkdir()
    files = {"exercise.toml": toml(threshold), "checks.py": CHECKS, "solution.py": SOLUTION,
             "starter.py": "def work(n):\n    return 0\n",
             "statement.md": "# Loop\n", "statement.zh-hans.md": "# 循环\n"}
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def _spin(stop: multiprocessing.synchronize.Event) -> None:  # a busy process: one core's worth of CPU, nothing else
    while not stop.is_set():
        sum(i * i for i in range(10_000))


class Load:
    """``gradings`` other gradings of the reference running beside the measured one, in
    threads on the same sandbox, and optionally busy processes on top."""

    def __init__(self, exercise: ExerciseSpec, sandbox: Sandbox, gradings: int, busy: bool) -> None:
        self.stop = threading.Event()
        self.busy_stop = multiprocessing.Event()
        self.threads = [threading.Thread(target=self._grade, args=(exercise, sandbox), daemon=True)
                        for _ in range(gradings)]
        self.processes = [multiprocessing.Process(target=_spin, args=(self.busy_stop,), daemon=True)
                          for _ in range(BUSY_PROCESSES if busy else 0)]

    def _grade(self, exercise: ExerciseSpec, sandbox: Sandbox) -> None:
        while not self.stop.is_set():
            grade(exercise, exercise.solution, sandbox)

    def _workers(self) -> list[threading.Thread | BaseProcess]:
        return [*self.threads, *self.processes]

    def __enter__(self) -> Load:
        for worker in self._workers():
            worker.start()
        if self.threads:
            time.sleep(3)  # the other gradings are under way before the measured one starts
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.busy_stop.set()
        for worker in self._workers():
            worker.join(timeout=120)


def main() -> None:
    runs = int(os.environ.get("BENCH_RUNS", "10"))
    loads = os.environ.get("BENCH_LOADS", ",".join(LOADS)).split(",")
    sandbox = get_sandbox(os.environ.get("BENCH_BACKEND", "auto"))
    rows = []
    with tempfile.TemporaryDirectory() as root:
        exercise = load_exercise(exercise_folder(Path(root)))
        for load_name in loads:
            gradings, busy = LOADS[load_name]
            with Load(exercise, sandbox, gradings, busy):
                for label, factor in FACTORS.items():
                    rows.append(measure(exercise, sandbox, label, factor, load_name, runs))
                    print(json.dumps(rows[-1]), flush=True)
    report = {"threshold_at_most": THRESHOLD, "margin": DEFAULT_MARGIN, "budget_s": BUDGET_S, "backend": sandbox.name,
              "cpus": os.cpu_count(), "rows": rows}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "judge.json").write_text(json.dumps(report, indent=1) + "\n")
    (RESULTS / "judge.md").write_text(markdown(report))


def measure(
    exercise: ExerciseSpec, sandbox: Sandbox, label: str, factor: float, load: str, runs: int
) -> dict[str, Any]:
    code = submission(factor)
    should_pass = factor * 1.0 <= THRESHOLD
    verdicts: collections.Counter[str] = collections.Counter()
    clocks: collections.Counter[str] = collections.Counter()
    ratios, seconds, measured_again, wrong = [], [], 0, 0
    for _ in range(runs):
        started = time.monotonic()
        verdict = grade(exercise, code, sandbox, attempt="first")
        if verdict.measure_again:  # as the platform does, but at once: the load stays what it was
            measured_again += 1
            verdict = grade(exercise, code, sandbox, attempt="last")
        seconds.append(time.monotonic() - started)
        verdicts[str(verdict.verdict)] += 1
        accepted = verdict.verdict == Kind.ACCEPTED
        wrong += accepted != should_pass
        case = (verdict.perf or {"cases": [{}]})["cases"][0]
        clocks[str(case.get("clock"))] += 1
        if case.get("ratio") is not None:
            ratios.append(case["ratio"])
    return {
        "submission": label, "work_factor": factor, "load": load, "runs": runs, "verdicts": dict(verdicts),
        "false_accepts": 0 if should_pass else wrong, "false_rejects": wrong if should_pass else 0,
        "measured_again": measured_again, "clocks": dict(clocks),
        "median_ratio": round(statistics.median(ratios), 3) if ratios else None,
        "ratios": sorted(round(ratio, 3) for ratio in ratios),  # each grading's: the spread between processes
        "p50_s": round(statistics.median(seconds), 2), "max_s": round(max(seconds), 2),
    }


def _spread(row: dict[str, Any]) -> str:
    ratios = row.get("ratios") or []
    return f"{ratios[0]}-{ratios[-1]}" if ratios else "-"


def markdown(report: dict[str, Any]) -> str:
    lines = [
        f"## Speed verdicts under load: at most {report['threshold_at_most']}x the reference "
        f"(margin {report['margin']:.0%}), {report['budget_s']} s budget, {report['backend']} backend, "
        f"{report['cpus']} cores",
        "",
        "Load: other gradings of the reference running beside the measured one (+busy: and "
        f"{BUSY_PROCESSES} busy processes). A false reject is a right solution at or under the limit "
        "not ACCEPTED; a false accept is the 8x one ACCEPTED.",
        "",
        "| submission | load | runs | verdicts | false accepts | false rejects | measured again | median ratio "
        "| gradings' ratios | p50 time to verdict (s) | max (s) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in report["rows"]:
        verdicts = ", ".join(f"{k} {v}" for k, v in sorted(row["verdicts"].items()))
        lines.append(f"| {row['submission']} | {row['load']} | {row['runs']} | {verdicts} | {row['false_accepts']} | "
                     f"{row['false_rejects']} | {row['measured_again']} | {row['median_ratio']} | {_spread(row)} "
                     f"| {row['p50_s']} | {row['max_s']} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
