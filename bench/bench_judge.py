"""Stability of performance verdicts: the same submission graded 20 times, three ways.

A loop exercise with threshold "at most 1.5x the reference": a submission doing 1.0x the
reference's work (clearly faster), 2.0x (clearly slower; both over 15% away from the
threshold) and one placed right at it (its work factor interpolated from the two clear
cases' measured ratios, so that the judge's small fixed per-call cost does not push it off),
and one at the decision boundary, threshold x (1 + margin): the margin is slack in the
student's favour, so only there must the verdict be "within noise" or split. The first two must never flip; the third must come back
"within noise" or split, never a confident wrong verdict. Budget 10 s per perf case.

    python -m bench judge           (BENCH_BACKEND=local|docker|auto, BENCH_RUNS=20)
"""
from __future__ import annotations

import collections
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from grader.host.pipeline import grade
from grader.host.spec import DEFAULT_MARGIN, load_exercise
from sandbox import get_sandbox

RESULTS = Path(__file__).resolve().parent / "results"
THRESHOLD = 1.5
BUDGET_S = 10
WORK = 300_000  # loop iterations per call: ~20 ms, so the judge's fixed per-call overhead is ~1%
# Work factors; the last two are placed by measured ratio instead (see main()).
CASES = {
    "clearly faster (1.0x work)": 1.0,
    "clearly slower (2.0x work)": 2.0,
    "at the threshold, ratio 1.5": THRESHOLD,
    "at the decision boundary, ratio 1.5 x (1 + margin)": THRESHOLD * (1 + DEFAULT_MARGIN),
}
PLACED = {"at the threshold, ratio 1.5", "at the decision boundary, ratio 1.5 x (1 + margin)"}


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
cpu_s = 10
wall_s = 20
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
    return Race(student=student.work, reference=reference.work, inputs=lambda rng: (int(rng.integers({WORK}, {WORK} + 100)),))
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
    for name, text in {"exercise.toml": toml(threshold), "checks.py": CHECKS, "solution.py": SOLUTION, "starter.py": "def work(n):\n    return 0\n",
                       "statement.md": "# Loop\n", "statement.zh-hans.md": "# 循环\n"}.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def main() -> None:
    runs = int(os.environ.get("BENCH_RUNS", "20"))
    sandbox = get_sandbox(os.environ.get("BENCH_BACKEND", "auto"))
    rows = []
    with tempfile.TemporaryDirectory() as root:
        exercise = load_exercise(exercise_folder(Path(root)))
        for label, factor in CASES.items():
            if label in PLACED:
                # The judge's fixed per-call cost makes the measured ratio a little less than the
                # work ratio; place this case where the two clear cases say its ratio lands.
                (f1, r1), (f2, r2) = [(row["work_factor"], row["median_ratio"]) for row in rows[:2]]
                factor = round(f1 + (factor - r1) * (f2 - f1) / (r2 - r1), 4)
                label = f"{label} ({factor}x work)"
            code = submission(factor)
            verdicts, decisions, ratios, half_widths, sizes, elapsed = collections.Counter(), collections.Counter(), [], [], [], []
            faults: list[str] = []  # platform faults, kept to tell a flaky host from a flaky judge
            started = time.monotonic()
            for _ in range(runs):
                verdict = grade(exercise, code, sandbox)
                verdicts[str(verdict.verdict)] += 1
                if verdict.is_internal_error:
                    faults.append(" | ".join(verdict.notes)[-500:])
                case = (verdict.perf or {"cases": [{}]})["cases"][0]
                decisions[case.get("decision", "none")] += 1
                if case.get("interval") and None not in case["interval"]:
                    low, high = case["interval"]
                    ratios.append(case["ratio"])
                    half_widths.append((high - low) / 2)
                    sizes.append(case["n"])
                    elapsed.append(case["elapsed_s"])
            rows.append({
                "case": label,
                "work_factor": factor,
                "runs": runs,
                "verdicts": dict(verdicts),
                "decisions": dict(decisions),
                "median_ratio": round(statistics.median(ratios), 3) if ratios else None,
                "median_half_width": round(statistics.median(half_widths), 3) if half_widths else None,
                "median_n": statistics.median(sizes) if sizes else None,
                "median_perf_s": round(statistics.median(elapsed), 2) if elapsed else None,
                "wall_s": round(time.monotonic() - started, 1),
                "platform_faults": faults[:3],
            })
            print(json.dumps(rows[-1]), flush=True)
    report = {"threshold_at_most": THRESHOLD, "margin": DEFAULT_MARGIN, "budget_s": BUDGET_S, "backend": sandbox.name, "cases": rows}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "judge.json").write_text(json.dumps(report, indent=1) + "\n")
    (RESULTS / "judge.md").write_text(markdown(report))


def markdown(report: dict) -> str:
    lines = [
        f"## Judge stability: threshold at most {report['threshold_at_most']}x the reference "
        f"(margin {report['margin']:.0%}), {report['budget_s']} s budget, {report['backend']} backend",
        "",
        "| submission | runs | verdicts | perf decisions | median ratio | median CI half-width | median n | median perf time (s) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in report["cases"]:
        verdicts = ", ".join(f"{k} {v}" for k, v in sorted(row["verdicts"].items()))
        decisions = ", ".join(f"{k} {v}" for k, v in sorted(row["decisions"].items()))
        lines.append(f"| {row['case']} | {row['runs']} | {verdicts} | {decisions} | {row['median_ratio']} | "
                     f"{row['median_half_width']} | {row['median_n']} | {row['median_perf_s']} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
