"""Re-measuring a board's top (issue 14): does one interleaved batch order people by their
code and never by the machine's load when they were graded?

Three candidates on the loop exercise of bench_judge (threshold 3x, so all are accepted): A
and B are the same work as the reference (two students with equally fast code), C does twice
the work. The machine's load drifts on purpose: two busy processes run during the second
half of the measuring.

- **Apart**: each candidate graded once, as the board first sees them (a submission's
  grading, which stops timing once the threshold is settled): A on a quiet machine, B and C
  under load (what happens when students submit at different times).
- **Batch**: ``grader.host.remeasure`` with the platform's rounds (every grading timed for its
  whole budget), the load switched on half way through, as a leaderboard verification runs it.

For each, over BENCH_VERIFY_BATCHES repetitions: how often A and B share a rank (their 95 %
intervals overlap: the right answer, their code is the same) and how often C is ranked
behind both (its interval clear of theirs: also right). A and B apart means the board
orders two students by noise.

    python -m bench verification    (BENCH_BACKEND=docker|local|auto, BENCH_VERIFY_BATCHES=5,
                                     BENCH_VERIFY_ROUNDS=2)
"""
from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from bench.bench_judge import exercise_folder, submission
from grader.host.performance import overall_ratio
from grader.host.pipeline import grade
from grader.host.remeasure import Ratio, remeasure
from grader.host.spec import ExerciseSpec, load_exercise
from sandbox import Limits, Outcome, RunOptions, Sandbox, get_sandbox

RESULTS = Path(__file__).resolve().parent / "results"
CANDIDATES = {"A": 1.0, "B": 1.0, "C": 2.0}  # work factors against the reference


@contextmanager
def load(busy: int = 2) -> Iterator[None]:
    """Busy processes, one per core here, killed as a group however the block ends."""
    burners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True) for _ in range(busy)
    ]
    try:
        yield
    finally:
        for p in burners:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def judged(a: Ratio | None, b: Ratio | None, c: Ratio | None) -> dict[str, bool]:
    if a is None or b is None or c is None:
        return {"measured": False, "a_b_share": False, "c_behind": False}
    share = a[1] <= b[2] and b[1] <= a[2]
    return {"measured": True, "a_b_share": share, "c_behind": c[1] > max(a[2], b[2])}


def apart(exercise: ExerciseSpec, sandbox: Sandbox) -> dict[str, Ratio | None]:
    out: dict[str, Ratio | None] = {}
    for key, factor in CANDIDATES.items():
        if key == "A":
            out[key] = overall_ratio({"perf": grade(exercise, submission(factor), sandbox).perf})
        else:
            with load():
                out[key] = overall_ratio({"perf": grade(exercise, submission(factor), sandbox).perf})
    return out


def batch(
    exercise: ExerciseSpec, sandbox: Sandbox, rounds: int
) -> tuple[dict[str, Ratio | None], dict[str, list[list[float] | None]]]:
    """The load starts once half of the gradings are done, switched on between two gradings
    by a wrapper around the sandbox."""
    half = len(CANDIDATES) * rounds // 2
    done = {"n": 0}

    with ExitStack() as loaded:
        class Drifting(Sandbox):
            name = sandbox.name

            def run(
                self, files: Mapping[str, bytes], argv: Sequence[str], limits: Limits, options: RunOptions | None = None
            ) -> Outcome:
                if done["n"] == half:
                    loaded.enter_context(load())
                done["n"] += 1
                return sandbox.run(files, argv, limits, options)

            @property
            def isolated(self) -> bool:
                return sandbox.isolated

            def close(self) -> None:
                sandbox.close()

        measured = remeasure(
            exercise, [(k, submission(f)) for k, f in CANDIDATES.items()], Drifting(), seed=12345, rounds=rounds
        )
    return {m.key: m.ratio for m in measured}, {m.key: [list(r) if r else None for r in m.rounds] for m in measured}


def main() -> None:
    batches = int(os.environ.get("BENCH_VERIFY_BATCHES", "5"))
    rounds = int(os.environ.get("BENCH_VERIFY_ROUNDS", "2"))
    sandbox = get_sandbox(os.environ.get("BENCH_BACKEND", "auto"))
    runs: dict[str, list[dict[str, Any]]] = {"apart": [], "batch": []}
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as root:
        exercise = load_exercise(exercise_folder(Path(root), threshold=3.0))
        for i in range(batches):
            together, each_round = batch(exercise, sandbox, rounds)
            for mode, ratios in (("apart", apart(exercise, sandbox)), ("batch", together)):
                row = {"ratios": {k: [round(x, 3) for x in r] if r else None for k, r in ratios.items()},
                       **judged(ratios["A"], ratios["B"], ratios["C"])}
                if mode == "batch":
                    row["rounds"] = {k: [[round(x, 3) for x in r] if r else None for r in v]
                                     for k, v in each_round.items()}
                runs[mode].append(row)
                print(json.dumps({"mode": mode, "repetition": i, **row}), flush=True)
    summary = {
        mode: {key: sum(r[key] for r in rows) for key in ("measured", "a_b_share", "c_behind")}
        for mode, rows in runs.items()
    }
    report = {"backend": sandbox.name, "batches": batches, "rounds": rounds, "candidates": CANDIDATES,
              "wall_s": round(time.monotonic() - started, 1), "summary": summary, "runs": runs}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "verification.json").write_text(json.dumps(report, indent=1) + "\n")
    (RESULTS / "verification.md").write_text(markdown(report))


def markdown(report: dict[str, Any]) -> str:
    n = report["batches"]
    labels = {"apart": "each graded once: A quiet, B and C under load", "batch": "one interleaved batch"}
    lines = [
        f"## Re-measuring a board's top: {n} repetitions, {report['rounds']} rounds a batch, "
        f"{report['backend']} backend, load switched on part way",
        "",
        "A and B: the same work as the reference; C: twice the work. Right answers: A and B share "
        "a rank, C is behind both.",
        "",
        "| how | measured | A and B share a rank | C behind both | median interval width / ratio |",
        "|---|---|---|---|---|",
    ]
    for mode, s in report["summary"].items():
        widths = [(r[2] - r[1]) / r[0] for run in report["runs"][mode] for r in run["ratios"].values() if r]
        lines.append(f"| {labels[mode]} | {s['measured']}/{n} | {s['a_b_share']}/{n} | {s['c_behind']}/{n} | "
                     f"{statistics.median(widths):.0%} |")
    lines += [
        "",
        "Earlier runs of this bench chose how a batch combines its rounds (grader/host/remeasure.py): "
        "intervals spanning every round, each grading stopping once its threshold was settled: C behind "
        "0/5 (intervals too wide); the rounds pooled as independent estimates, timed fully: A and B apart "
        "in 1/10 (a load change moved one round's ratio past its own interval); spanning every round, "
        "timed fully: the table above.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
