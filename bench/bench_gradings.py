"""Whole gradings (issue 13): what one grading costs, cold and warm, and how many fit a minute.

On the Docker backend (runc), every grading through ``grader.host.grade``, as the workers do:

- per grading, cold (a fresh container that imports what the exercise needs) and warm (a
  pooled container that imported numpy and torch ahead): host wall seconds, and CPU-seconds
  split into the sandbox's own (every container goes under one cgroup, ``cpuacct``), the
  engine's (dockerd and containerd) and this client's (the Docker SDK, the bundle); for
  warm gradings, the refill (the next pooled container's start and preload) is measured in
  a window of its own and added for the amortised cost;
- heavy-module imports per grading, counted by the processes themselves (the result
  document's ``fresh_imports``: a module a process imported rather than inherited);
- sustained gradings a minute, two workers (threads) sharing a warm pool of two, torch-only,
  numpy-only and mixed, with the share of warm hits;
- the ceiling the amortised CPU implies on this machine's cores.

Four exercises: two tiny ones whose checks do almost nothing (so their cost is the fixed
cost of a grading: "beyond the checks' own work"), numpy and torch, and two real ones,
static-graph-executor (numpy) and zero-graph-breaks (torch.compile).

Results: ``bench/results/gradings.json`` and ``bench/results/gradings.md``.

    python -m bench gradings      (BENCH_GRADINGS_SAMPLES=5, BENCH_GRADINGS_SUSTAINED=30)
"""
from __future__ import annotations

import json
import os
import resource
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from grader.contract import Kind
from grader.host.pipeline import grade, sandbox_limits
from grader.host.spec import ExerciseSpec, load_exercise
from sandbox import Sandbox, docker_available
from sandbox.config import DockerConfig
from sandbox.docker import DockerSandbox
from testbed.exercises import make_exercise

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = Path(__file__).resolve().parents[1]
SAMPLES = int(os.environ.get("BENCH_GRADINGS_SAMPLES", "5"))
SUSTAINED = int(os.environ.get("BENCH_GRADINGS_SUSTAINED", "30"))  # gradings per sustained run
CGROUP = "graphdojo-bench-gradings"
CPUACCT = Path("/sys/fs/cgroup/cpuacct") / CGROUP / "cpuacct.usage"
ENGINE = ("dockerd", "containerd")

TINY_CHECKS = """\
from grader.harness import check, close

@check(points=1)
def adds_small_numbers(student, reference, rng):
    close(student.add(1.0, 2.0), reference.add(1.0, 2.0))
"""


def tiny(folder: Path, torch: bool) -> ExerciseSpec:
    head = "import torch\n\n" if torch else "import numpy\n\n"
    solution = head + "def add(a, b):\n    return a + b\n"
    return load_exercise(make_exercise(folder, checks=TINY_CHECKS, solution=solution))


def exercises(scratch: Path) -> dict[str, tuple[ExerciseSpec, str]]:
    """name -> (spec, the code submitted: the reference solution)."""
    found = {
        "tiny numpy": tiny(scratch / "tiny-numpy", torch=False),
        "tiny torch": tiny(scratch / "tiny-torch", torch=True),
        "static-graph-executor (numpy)": load_exercise(ROOT / "exercises/coding/static-graph-executor"),
        "zero-graph-breaks (torch)": load_exercise(ROOT / "exercises/coding/zero-graph-breaks"),
    }
    return {name: (spec, spec.solution) for name, spec in found.items()}


# --- measuring CPU ----------------------------------------------------------------------


def _proc_cpu(names: tuple[str, ...]) -> float:
    ticks = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as file:
                raw = file.read()
        except OSError:
            continue
        name = raw[raw.find(b"(") + 1 : raw.rfind(b")")].decode(errors="replace")
        if name in names:
            fields = raw[raw.rfind(b")") + 2 :].split()
            ticks += sum(int(x) for x in fields[11:15])
    return ticks / os.sysconf("SC_CLK_TCK")


def _machine_busy() -> float:
    with open("/proc/stat") as file:
        fields = [int(x) for x in file.readline().split()[1:]]
    idle = fields[3] + fields[4]
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def snapshot() -> dict[str, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return {
        "sandbox": int(CPUACCT.read_text()) / 1e9 if CPUACCT.exists() else 0.0,
        "engine": _proc_cpu(ENGINE),
        "client": own.ru_utime + own.ru_stime,
        "machine": _machine_busy(),
        "wall": time.perf_counter(),
    }


def delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {key: after[key] - before[key] for key in before}


# --- one grading at a time --------------------------------------------------------------


def graded(spec: ExerciseSpec, code: str, sandbox: Sandbox) -> dict[str, object]:
    verdict = grade(spec, code, sandbox)
    if verdict.verdict != Kind.ACCEPTED:
        raise RuntimeError(f"{spec.id}: the reference solution got {verdict.verdict}: {verdict.notes}")
    return {"warm": "warm pool" in verdict.notes, "fresh_imports": verdict.usage.fresh_imports}


def per_grading(spec: ExerciseSpec, code: str, warm: bool) -> dict[str, object]:
    pool_size = 1 if warm else 0
    sandbox = DockerSandbox(DockerConfig(pool_size=pool_size, pool_limits=sandbox_limits(spec), preload=spec.preload,
                            cgroup_parent=CGROUP))
    pool = sandbox.pool  # there is one when warm
    gradings, refills, imports, hits = [], [], [], 0
    seen: set[str] = set()
    try:
        graded(spec, code, sandbox)  # the page cache and the engine warmed, not measured
        for _ in range(SAMPLES):
            if pool is not None:
                pool.wait_ready()
                pool.size = 0  # no refill inside the grading's window: it is measured apart
            before = snapshot()
            result = graded(spec, code, sandbox)
            gradings.append(delta(before, snapshot()))
            imports.append(len(result["fresh_imports"]))  # type: ignore[arg-type]
            seen.update(result["fresh_imports"])  # type: ignore[arg-type]
            hits += bool(result["warm"])
            if pool is not None:
                before = snapshot()
                pool.size = 1
                pool._wake.set()
                pool.wait_ready()
                refills.append(delta(before, snapshot()))
    finally:
        sandbox.close()

    def median(rows: list[dict[str, float]], key: str) -> float:
        return round(statistics.median(r[key] for r in rows), 3) if rows else 0.0

    cost = {key: median(gradings, key) for key in ("wall", "sandbox", "engine", "client", "machine")}
    grading_cpu = cost["sandbox"] + cost["engine"] + cost["client"]
    refill_cpu = median(refills, "sandbox") + median(refills, "engine") + median(refills, "client")
    return {
        "warm": warm, "samples": SAMPLES, "warm_hits": hits, **cost,
        "grading_cpu_s": round(grading_cpu, 3),
        "refill_cpu_s": round(refill_cpu, 3),
        "amortised_cpu_s": round(grading_cpu + refill_cpu, 3),
        "fresh_imports_per_grading": statistics.median(imports) if imports else None,
        "fresh_imports_seen": sorted(seen),
    }


# --- sustained --------------------------------------------------------------------------


def sustained(queue: list[tuple[ExerciseSpec, str]], workers: int = 2) -> dict[str, object]:
    limits = sandbox_limits(queue[0][0])
    sandbox = DockerSandbox(DockerConfig(pool_size=workers, pool_limits=limits, cgroup_parent=CGROUP))
    assert sandbox.pool is not None  # workers > 0
    for spec, _ in queue:
        sandbox.pool.add_shape(sandbox_limits(spec), spec.preload)
    sandbox.pool.wait_ready()
    lock = threading.Lock()
    todo = list(queue)
    hits, failures = [0], [0]

    def work() -> None:
        while True:
            with lock:
                if not todo:
                    return
                spec, code = todo.pop(0)
            try:
                result = graded(spec, code, sandbox)
                with lock:
                    hits[0] += bool(result["warm"])
            except Exception:  # noqa: BLE001 - counted, and the run goes on
                with lock:
                    failures[0] += 1

    before = snapshot()
    threads = [threading.Thread(target=work) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    used = delta(before, snapshot())
    sandbox.close()
    return {
        "gradings": len(queue), "workers": workers, "seconds": round(used["wall"], 1),
        "per_minute": round(60 * len(queue) / used["wall"], 1), "warm_share": round(hits[0] / len(queue), 2),
        "failures": failures[0], "machine_cpu_per_grading_s": round(used["machine"] / len(queue), 3),
    }


def main() -> None:
    RESULTS.mkdir(exist_ok=True)
    if not docker_available():
        raise SystemExit("no Docker engine or sandbox image: run sandbox/image/ci-setup.sh and make image")
    cores = len(os.sched_getaffinity(0))
    results: dict[str, object] = {"cores": cores, "load_before": os.getloadavg()}
    with tempfile.TemporaryDirectory() as scratch:
        chosen = exercises(Path(scratch))
        single: dict[str, dict[str, object]] = {}
        for name, (spec, code) in chosen.items():
            for warm in (False, True):
                key = f"{name}, {'warm' if warm else 'cold'}"
                single[key] = per_grading(spec, code, warm)
                print(key, json.dumps(single[key]), flush=True)
        results["per_grading"] = single
        runs = {
            "tiny torch": [chosen["tiny torch"]] * SUSTAINED,
            "tiny numpy": [chosen["tiny numpy"]] * SUSTAINED,
            "mixed real (numpy, torch)": [chosen["static-graph-executor (numpy)"], chosen["zero-graph-breaks (torch)"]]
            * (SUSTAINED // 2),
        }
        results["sustained"] = sustained_rows = {name: sustained(queue) for name, queue in runs.items()}
        for name, row in sustained_rows.items():
            print(name, json.dumps(row), flush=True)
    results["load_after"] = os.getloadavg()
    (RESULTS / "gradings.json").write_text(json.dumps(results, indent=1) + "\n")
    (RESULTS / "gradings.md").write_text(table(results))


def table(results: dict[str, Any]) -> str:
    cores = results["cores"]
    lines = [
        f"# Whole gradings: cost and throughput ({cores} cores, Docker runc)",
        "",
        "| exercise | start | wall s | CPU-s in the sandbox | engine | client | refill | amortised CPU-s "
        "| ceiling a minute | heavy imports |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for key, row in results["per_grading"].items():
        name, start = key.rsplit(", ", 1)
        ceiling = 60 * cores / row["amortised_cpu_s"] if row["amortised_cpu_s"] else 0
        lines.append(
            f"| {name} | {start} | {row['wall']:.2f} | {row['sandbox']:.2f} | {row['engine']:.2f} | "
            f"{row['client']:.2f} | {row['refill_cpu_s']:.2f} | {row['amortised_cpu_s']:.2f} | {ceiling:.0f} | "
            f"{row['fresh_imports_per_grading']} |")
    lines += ["", "| sustained, 2 workers | gradings | a minute | warm share | machine CPU-s per grading |",
              "|---|---|---|---|---|"]
    for name, row in results["sustained"].items():
        lines.append(f"| {name} | {row['gradings']} | {row['per_minute']} | {row['warm_share']:.0%} | "
                     f"{row['machine_cpu_per_grading_s']} |")
    lines += [
        "",
        "Medians of each grading measured alone. *Amortised* adds, for a warm grading, the refill of the pooled "
        "container it used (measured in its own window). *Ceiling* = 60 s x cores / amortised CPU-s. "
        "*Heavy imports*: numpy or torch imported by a process of the grading rather than inherited "
        "(the result document's `fresh_imports`). Load average before/after: "
        f"{', '.join(f'{x:.1f}' for x in results['load_before'])} / "
        f"{', '.join(f'{x:.1f}' for x in results['load_after'])}. `python -m bench gradings`.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
