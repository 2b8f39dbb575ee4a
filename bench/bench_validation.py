"""``validate_content`` (issue 13, item 5), run by ``make bench``: every exercise (solution,
starter, mutants), quiz bank and lesson proven on the Docker backend, one grading at a time
(``--jobs 1``, a warm pool of one: what CI ran before) and then ``--jobs N`` (default: the
cores here over one sandbox's CPU share, a warm pool of N), back to back on the same machine.

For each: wall seconds, the seconds of sandbox runs by part (gradings of exercises, the quiz
snippets, the lesson blocks: summed over runs, so concurrent runs add up), the load average
before and after, and whether every verdict matched. Same ``BENCH_VALIDATION_SEED`` for both,
so the gradings see the same inputs.

Results: ``bench/results/validation.json`` and ``bench/results/validation.md``.

    python -m bench validation     (BENCH_VALIDATION_JOBS=1,2  BENCH_VALIDATION_SEED=1)
"""
from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from grader.host import default_jobs, validate_content
from grader.host.validation import available_cores
from sandbox import Limits, Outcome, RunOptions, Sandbox, docker_available, get_sandbox

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
JOBS = [int(n) for n in os.environ.get("BENCH_VALIDATION_JOBS", f"1,{default_jobs()}").split(",")]
PARTS = ("exercises", "quiz snippets", "lessons")
SEED = int(os.environ.get("BENCH_VALIDATION_SEED", "1"))


class Timed(Sandbox):
    """The real sandbox, adding up the seconds of its runs by what they were for."""

    def __init__(self, real: Sandbox) -> None:
        self.real = real
        self.name = real.name
        self.seconds: dict[str, float] = {}
        self.runs: dict[str, int] = {}
        self._lock = threading.Lock()

    def run(self, files: Any, argv: Any, limits: Limits, options: RunOptions | None = None) -> Outcome:
        part = "exercises" if "grader.harness" in argv else "quiz snippets" if "runner.py" in argv else "lessons"
        started = time.monotonic()
        try:
            return self.real.run(files, argv, limits, options)
        finally:
            with self._lock:
                self.seconds[part] = self.seconds.get(part, 0.0) + time.monotonic() - started
                self.runs[part] = self.runs.get(part, 0) + 1

    @property
    def isolated(self) -> bool:
        return self.real.isolated

    def close(self) -> None:
        self.real.close()


def measure(jobs: int) -> dict[str, Any]:
    sandbox = Timed(get_sandbox("docker", pool_size=jobs))
    load_before = os.getloadavg()
    started = time.monotonic()
    try:
        report = validate_content(ROOT / "exercises", sandbox, jobs=jobs, seed=SEED)
    finally:
        sandbox.close()
    wall = time.monotonic() - started
    verdicts = {f"{e.slug}/{run.program}": run.got for e in report.exercises for run in e.runs}
    return {
        "jobs": jobs, "pool": jobs, "wall_s": round(wall, 1), "ok": report.ok,
        "load_before": [round(x, 2) for x in load_before], "load_after": [round(x, 2) for x in os.getloadavg()],
        "run_seconds": {part: round(s, 1) for part, s in sorted(sandbox.seconds.items())},
        "runs": dict(sorted(sandbox.runs.items())),
        "retries": sum(run.attempts - 1 for e in report.exercises for run in e.runs),
        "verdicts": verdicts,
    }


def main() -> None:
    if not docker_available():
        raise SystemExit("bench validation needs the Docker engine and the sandbox image (make image)")
    results = [measure(jobs) for jobs in JOBS]
    first = results[0]
    for result in results:
        result["same_verdicts_as_first"] = result["verdicts"] == first["verdicts"]
        result["speedup"] = round(first["wall_s"] / result["wall_s"], 2)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "validation.json").write_text(json.dumps(
        {"cores": available_cores(), "seed": SEED, "results": results}, indent=1) + "\n")
    lines = [
        f"## validate_content on Docker (runc): one at a time vs concurrent ({available_cores():g} cores here)",
        "",
        "| jobs (pool) | wall s | speed-up | exercises run-s (runs) | quiz run-s (runs) | lessons run-s (runs) "
        "| retries | load before → after | all ok, same verdicts |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        parts = [f"{r['run_seconds'].get(p, 0)} ({r['runs'].get(p, 0)})" for p in PARTS]
        load = f"{r['load_before'][0]} → {r['load_after'][0]}"
        lines.append(f"| {r['jobs']} ({r['pool']}) | {r['wall_s']} | {r['speedup']}x | {' | '.join(parts)} "
                     f"| {r['retries']} | {load} | {r['ok'] and r['same_verdicts_as_first']} |")
    lines += ["", "Run-seconds are summed over sandbox runs, so concurrent runs add up (and each is slower when "
              "they share the cores). Timing-sensitive programs (the solution of an exercise with performance "
              "checks, a mutant declared TOO_SLOW or TIME_LIMIT, every second attempt) are graded alone.", "",
              "    python -m bench validation    (BENCH_VALIDATION_JOBS=1,2 BENCH_VALIDATION_SEED=1)", ""]
    (RESULTS / "validation.md").write_text("\n".join(lines))
    print("\n".join(lines))
