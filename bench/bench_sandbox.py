"""What the sandbox costs (issue 4), run by ``make bench``.

- latency a run adds for a trivial numpy program and a trivial torch program: the host's
  end-to-end time of ``run()``, cold container vs warm pool (and bubblewrap), as a median;
  the programs do no work of their own, so their latency is all overhead;
- sustained torch runs per minute on this machine, two submitters, warm pool of two;
- containers left behind after 200 mixed honest and hostile runs.

Results: ``bench/results/sandbox.json`` (raw numbers) and ``bench/results/sandbox.md``.

    python -m bench sandbox        (BENCH_SANDBOX_RUNS=200, BENCH_SANDBOX_SECONDS=60)
"""
from __future__ import annotations

import dataclasses
import json
import os
import statistics
import threading
import time
import uuid
from pathlib import Path

import docker

from sandbox import Limits, Sandbox, SandboxUnavailable, docker_available, get_sandbox
from sandbox.config import DockerConfig
from sandbox.docker import DockerSandbox, WarmPool

RESULTS = Path(__file__).resolve().parent / "results"
LIMITS = Limits(cpu_s=10.0, wall_s=20.0, memory_mb=768, pids=64, tmpfs_mb=32)
HOSTILE_LIMITS = dataclasses.replace(LIMITS, cpu_s=1.0, wall_s=2.0, memory_mb=256)
NUMPY_PROGRAM = ["python3", "-c", "import numpy; print(numpy.arange(10).sum())"]
TORCH_PROGRAM = ["python3", "-c", "import torch; print(torch.arange(10).sum().item())"]
SAMPLES = 7
MIXED_RUNS = int(os.environ.get("BENCH_SANDBOX_RUNS", "200"))
SUSTAINED_S = float(os.environ.get("BENCH_SANDBOX_SECONDS", "60"))

HOSTILE = {
    "busy loop": "while True: pass",
    "sleep": "import time; time.sleep(60)",
    "memory bomb": "x = []\nwhile True: x.append(bytearray(10**7))",
    "fork bomb": "import os\nwhile True:\n    try: os.fork()\n    except OSError: pass",
    "flood": "import sys\nwhile True: sys.stdout.write('x' * 65536)",
    "daemon": "import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(60)\nprint('left')",
    "kill -1": "import os, signal\ntry: os.kill(-1, signal.SIGKILL)\nexcept OSError: pass",
    "segfault": "import ctypes; ctypes.string_at(0)",
}


def timed_run(sandbox: Sandbox, argv: list[str], limits: Limits = LIMITS) -> float:
    started = time.perf_counter()
    outcome = sandbox.run({}, argv, limits)
    elapsed = time.perf_counter() - started
    if outcome.status != "ok" or outcome.exit_code != 0:
        raise RuntimeError(f"benchmark program failed: {outcome}")
    return elapsed


def median_latency(sandbox: Sandbox, argv: list[str], pool: WarmPool | None = None) -> float:
    samples = []
    for _ in range(SAMPLES):
        if pool is not None:
            pool.wait_ready()  # latency when the pool has a container, as in steady state
        samples.append(timed_run(sandbox, argv))
    return statistics.median(samples)


def sustained_runs_per_minute(sandbox: Sandbox, seconds: float) -> tuple[float, int, int]:
    """(runs per minute, runs, of which warm) with two submitters for ``seconds``."""
    done, warm, lock = [0], [0], threading.Lock()
    deadline = time.monotonic() + seconds

    def submit() -> None:
        while time.monotonic() < deadline:
            outcome = sandbox.run({}, TORCH_PROGRAM, LIMITS)
            assert outcome.status == "ok", outcome
            with lock:
                done[0] += 1
                warm[0] += "warm pool" in outcome.notes

    started = time.monotonic()
    threads = [threading.Thread(target=submit) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return done[0] * 60 / (time.monotonic() - started), done[0], warm[0]


def containers_left_after_mixed_runs(runs: int) -> tuple[int, dict[str, int]]:
    """Run honest and hostile programs through a pooled sandbox; count its containers left."""
    tag = uuid.uuid4().hex
    sandbox = get_sandbox("docker", pool_size=2, pool_limits=LIMITS, labels={"graphdojo.bench": tag})
    statuses: dict[str, int] = {}
    hostile = list(HOSTILE.values())
    jobs: list[tuple[list[str], Limits]] = []
    for i in range(runs):
        if i % 4 == 3:
            jobs.append((["python3", "-c", hostile[(i // 4) % len(hostile)]], HOSTILE_LIMITS))
        else:
            jobs.append((NUMPY_PROGRAM if i % 2 else ["true"], LIMITS))
    lock = threading.Lock()

    def worker(share: list[tuple[list[str], Limits]]) -> None:
        for argv, limits in share:
            status = sandbox.run({}, argv, limits).status
            with lock:
                statuses[status] = statuses.get(status, 0) + 1

    threads = [threading.Thread(target=worker, args=(jobs[k::2],)) for k in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    sandbox.close()
    left = docker.from_env().containers.list(all=True, filters={"label": f"graphdojo.bench={tag}"})
    return len(left), statuses


def main() -> None:
    RESULTS.mkdir(exist_ok=True)
    results: dict[str, object] = {"limits": dataclasses.asdict(LIMITS), "samples": SAMPLES}
    rows: list[tuple[str, str, str, str]] = []

    try:
        local = get_sandbox("local")
        results["local_numpy_s"] = median_latency(local, NUMPY_PROGRAM)
        results["local_torch_s"] = median_latency(local, TORCH_PROGRAM)
        rows += [("bubblewrap, numpy program (median s)", f"{results['local_numpy_s']:.2f}", "-", "-"),
                 ("bubblewrap, torch program (median s)", f"{results['local_torch_s']:.2f}", "-", "-")]
    except SandboxUnavailable as error:
        results["local_error"] = str(error)

    if not docker_available():
        results["docker_error"] = "no Docker engine or image: run sandbox/image/ci-setup.sh and make image"
    else:
        cold = get_sandbox("docker")
        results["cold_numpy_s"] = median_latency(cold, NUMPY_PROGRAM)
        results["cold_torch_s"] = median_latency(cold, TORCH_PROGRAM)
        warm = DockerSandbox(DockerConfig(pool_size=2, pool_limits=LIMITS))
        assert warm.pool is not None  # pool_size > 0
        try:
            warm.pool.wait_ready()
            results["warm_numpy_s"] = median_latency(warm, NUMPY_PROGRAM, warm.pool)
            results["warm_torch_s"] = warm_torch_s = median_latency(warm, TORCH_PROGRAM, warm.pool)
            per_minute, runs, warm_runs = sustained_runs_per_minute(warm, SUSTAINED_S)
        finally:
            warm.close()
        results.update(sustained_torch_runs_per_minute=per_minute, sustained_runs=runs,
                       sustained_warm_runs=warm_runs, sustained_seconds=SUSTAINED_S)
        left, statuses = containers_left_after_mixed_runs(MIXED_RUNS)
        results.update(mixed_runs=MIXED_RUNS, mixed_statuses=statuses, containers_left=left)
        rows += [
            ("cold container, numpy program (median s)", f"{results['cold_numpy_s']:.2f}", "-", "-"),
            ("cold container, torch program (median s)", f"{results['cold_torch_s']:.2f}", "-", "-"),
            ("warm pool, numpy program (median s)", f"{results['warm_numpy_s']:.2f}", "-", "-"),
            ("warm pool, torch program (median s)", f"{results['warm_torch_s']:.2f}", "<= 0.3",
             _met(warm_torch_s <= 0.3)),
            (f"sustained torch runs per minute (2 submitters, pool of 2; {warm_runs}/{runs} warm)",
             f"{per_minute:.0f}", ">= 20", _met(per_minute >= 20)),
            (f"containers left after {MIXED_RUNS} mixed runs", str(left), "0", _met(left == 0)),
        ]

    (RESULTS / "sandbox.json").write_text(json.dumps(results, indent=2) + "\n")
    table = ["## Sandbox: latency a run adds, throughput, leftovers (2-core VM, docker-runc)", "",
             "| metric | value | target | met? |", "|---|---|---|---|"]
    table += [f"| {' | '.join(row)} |" for row in rows]
    if "mixed_statuses" in results:
        table += ["", f"Statuses of the mixed runs: {results['mixed_statuses']}."]
    for key in ("docker_error", "local_error"):
        if key in results:
            table += ["", f"Not measured: {results[key]}."]
    (RESULTS / "sandbox.md").write_text("\n".join(table) + "\n")
    print("\n".join(table))


def _met(condition: bool) -> str:
    return "yes" if condition else "NO"


if __name__ == "__main__":
    main()
