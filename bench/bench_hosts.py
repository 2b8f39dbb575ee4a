"""Scale-out (issue 25): the throughput of one, two and three worker hosts.

Each "host" is a network namespace on a virtual network (``testbed.processes.VirtualHosts``,
as tests/platform/operations/test_multihost.py runs them) with a Celery worker of
concurrency 1 on the bubblewrap sandbox, and a CPU slice of its own (``CpuSlice``: a cgroup
with a fixed quota, BENCH_HOSTS_CPU of a core): the worker, its pool, its beat and every
sandbox it starts share that quota, so that adding a host adds capacity as a real host would,
even on a machine with few cores. The hosts reach PostgreSQL (through a proxy) and a Redis of
the bench's own only over the virtual network.

For each host count, a fixed batch of tiny-exercise submissions, one per student, is submitted
at once as the submit view does it (``GradingSite.submit``: the service, its transaction and the
publish on commit; in this process, so that the burst costs the hosts nothing), and measured
from the rows stored: verdicts a minute (first submit to last verdict), p50/p95 from submit to
verdict, each host's share (from its log's "stored" lines), every submission graded exactly
once (one stored verdict each, all ACCEPTED), the CPU each slice used and how long its quota
held it back, how busy the machine was, and its load average before and after.

DATABASE_URL must name a PostgreSQL database of the bench's own (it is migrated and given two
tiny exercises and its students).

Results: ``bench/results/hosts.json`` and ``bench/results/hosts.md``.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/gd_bench python -m bench hosts
        (BENCH_HOSTS=1,2,3, BENCH_HOSTS_SUBMISSIONS=60, BENCH_HOSTS_CPU=0.4, BENCH_HOSTS_RESERVED=1)
"""
from __future__ import annotations

import json
import os
import re
import resource
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.db import connection

from accounts.models import User
from bench.bench_grading import percentile
from catalog.services import content_sync
from grading.models import Submission
from testbed.exercises import tiny_content
from testbed.processes import CpuSlice, VirtualHosts, Worker
from testbed.site import GradingSite

RESULTS = Path(__file__).resolve().parent / "results"
HOST_COUNTS = [int(n) for n in os.environ.get("BENCH_HOSTS", "1,2,3").split(",") if n]
SUBMISSIONS = int(os.environ.get("BENCH_HOSTS_SUBMISSIONS", "60"))
CPU_PER_HOST = float(os.environ.get("BENCH_HOSTS_CPU", "0.4"))
# A slice with a high scheduling weight, so that other load on the machine yields to it up to its
# quota (a host's own cores); 0 leaves it a bare ceiling, which a busy machine may not fill.
RESERVED = os.environ.get("BENCH_HOSTS_RESERVED", "1") != "0"
CORES = len(os.sched_getaffinity(0))
# The bench's own process stands for the site and the network: it submits, forwards the hosts'
# database connections (the proxy) and starts their Redis. Raised above the machine's other load
# (os.nice), so that on a busy machine the hosts do not wait on it as no real network would make
# them wait; it uses little CPU (reported). PostgreSQL keeps its usual priority.
SERVICES_NICE = -10
STORED = re.compile(r"submission (\d+): stored (?:graded|failed)")


def stored_by_host(logs: dict[str, Path]) -> dict[str, list[int]]:
    """host -> the submissions whose outcome its worker stored, from its log."""
    return {host: [int(m.group(1)) for m in STORED.finditer(log.read_text())] if log.exists() else []
            for host, log in logs.items()}


def _own_cpu_s() -> float:
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


def machine_cpu() -> dict[str, float]:
    """The machine's busy CPU-seconds (all cores), and seconds some task waited for a CPU (PSI), so far."""
    with open("/proc/stat") as file:
        ticks = [int(x) for x in file.readline().split()[1:]]
    busy = (sum(ticks[:8]) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")
    try:
        some = Path("/proc/pressure/cpu").read_text().splitlines()[0]
        waited = int(some.rsplit("total=", 1)[1]) / 1e6
    except (OSError, IndexError, ValueError):
        waited = float("nan")
    return {"busy_s": busy, "waited_s": waited}


def run_once(count: int, hosts: VirtualHosts, site: GradingSite, students: list[User], tmp: Path) -> dict[str, Any]:
    logs = {f"host{i}": tmp / f"hosts{count}-host{i}.log" for i in range(count)}
    with ExitStack() as stack:
        slices = [stack.enter_context(CpuSlice(f"gd-bench-{os.getpid()}-{count}-{i}", CPU_PER_HOST, RESERVED))
                  for i in range(count)]
        workers = [Worker(site.env, logs[f"host{i}"], f"host{i}", beat=i == 0, netns=hosts.namespaces[i],
                          cpu_slice=slices[i]) for i in range(count)]
        try:
            for worker in workers:
                worker.start()
            used_before = [s.usage() for s in slices]
            load_before = os.getloadavg()
            machine_before = machine_cpu()
            own_before = _own_cpu_s()
            started = time.time()
            # One each: a student has one grading in flight at a time, so all are in the queue at once.
            ids = [site.submit(student).id for student in students]
            submitted_s = time.time() - started
            site.wait_all_finished(ids, timeout=30 * 60)
            used = [{k: after[k] - before[k] for k in before} for before, after in
                    zip(used_before, (s.usage() for s in slices), strict=True)]
            window_s = time.time() - started
            machine = {k: v - machine_before[k] for k, v in machine_cpu().items()}
            own_cpu_s = _own_cpu_s() - own_before
            load_after = os.getloadavg()
        finally:
            for worker in workers:
                worker.stop()
    site.assert_graded_once(ids)  # every one graded, ACCEPTED, its verdict stored once
    rows = [(created, done) for created, done in
            Submission.objects.filter(id__in=ids).values_list("created_at", "finished_at") if done is not None]
    waits = [(done - created).total_seconds() for created, done in rows]
    span = (max(done for _, done in rows) - min(created for created, _ in rows)).total_seconds()
    result = {
        "hosts": count, "submissions": len(rows), "submit_s": round(submitted_s, 1),
        "span_s": round(span, 1), "per_minute": round(len(rows) / span * 60, 1),
        "p50_s": round(percentile(waits, 50), 1), "p95_s": round(percentile(waits, 95), 1),
        "share": {host: len(STORED.findall(log.read_text())) for host, log in logs.items()},
        "graded_once": True,
        "slice_cpu_s": [round(u["cpu_s"], 1) for u in used],
        "slice_throttled_s": [round(u["throttled_s"], 1) for u in used],
        # Below 1: the host did not get its whole slice (an idle tail, or a machine too busy to give it).
        "slice_quota_used": [round(u["cpu_s"] / (window_s * CPU_PER_HOST), 2) for u in used],
        "load_before": [round(x, 2) for x in load_before], "load_after": [round(x, 2) for x in load_after],
        "machine_busy": round(machine["busy_s"] / (window_s * CORES), 2),
        "machine_cpu_pressure": round(machine["waited_s"] / window_s, 2),
        "bench_process_cpu_s": round(own_cpu_s, 1),
    }
    print(json.dumps(result), flush=True)
    return result


def main() -> None:
    RESULTS.mkdir(exist_ok=True)
    if connection.vendor != "postgresql":
        raise SystemExit("the hosts bench needs DATABASE_URL: a PostgreSQL database of its own, which the hosts share")
    if not (VirtualHosts.available() and CpuSlice.available()):
        raise SystemExit("the hosts bench needs root, iproute2 and the cgroup cpu controller")
    results: dict[str, Any] = {
        "cores": CORES, "cpu_per_host": CPU_PER_HOST, "reserved": RESERVED, "submissions": SUBMISSIONS,
        "load_before": [round(x, 2) for x in os.getloadavg()]}
    call_command("migrate", verbosity=0)
    os.nice(SERVICES_NICE)
    students = [User.objects.get_or_create(username=f"bench-hosts-{i}", defaults={"role": "student"})[0]
                for i in range(SUBMISSIONS)]
    with tempfile.TemporaryDirectory(prefix="bench-hosts-") as scratch, VirtualHosts(max(HOST_COUNTS)) as hosts:
        tmp = Path(scratch)
        settings.EXERCISE_CACHE_DIR = tmp / "exercise-cache"
        report = content_sync(tiny_content(tmp / "content"))
        if report.errors:
            raise SystemExit(f"the tiny exercises did not sync: {report.errors}")
        # Production's times, not the fault tests' shortened ones; the services on the hosts' bridge.
        site = GradingSite(tmp, dict(settings.DATABASES["default"]), "local", settings, shortened_times=False,
                           host=hosts.gateway)
        try:
            results["runs"] = [run_once(count, hosts, site, students, tmp) for count in HOST_COUNTS]
        finally:
            site.close()
    results["load_after"] = [round(x, 2) for x in os.getloadavg()]
    (RESULTS / "hosts.json").write_text(json.dumps(results, indent=1) + "\n")
    (RESULTS / "hosts.md").write_text(table(results))


def table(results: dict[str, Any]) -> str:
    runs = results["runs"]
    one = runs[0]["per_minute"] if runs and runs[0]["hosts"] == 1 else None
    lines = [
        f"# Worker hosts: {results['submissions']} tiny submissions at once, {results['cpu_per_host']} CPU "
        f"per host ({results['cores']} cores)",
        "",
        "| hosts | verdicts a minute | vs one host | p50 submit→verdict | p95 | each host's share | graded once "
        "| CPU-s used per host | of its quota | held back by the quota (s) | load average before → after "
        "| machine busy | CPU pressure | bench process CPU-s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        scaling = f"{r['per_minute'] / one:.2f}x" if one else "—"
        lines.append(
            f"| {r['hosts']} | {r['per_minute']} | {scaling} | {r['p50_s']} s | {r['p95_s']} s | "
            f"{' / '.join(str(n) for n in r['share'].values())} | {'yes' if r['graded_once'] else 'NO'} | "
            f"{' / '.join(str(x) for x in r['slice_cpu_s'])} | "
            f"{' / '.join(f'{x:.0%}' for x in r['slice_quota_used'])} | "
            f"{' / '.join(str(x) for x in r['slice_throttled_s'])} | "
            f"{r['load_before'][0]} → {r['load_after'][0]} | {r['machine_busy']:.0%} | "
            f"{r['machine_cpu_pressure']:.0%} | {r['bench_process_cpu_s']} |")
    lines += [
        "",
        "How it was measured: each host is a network namespace on a virtual bridge with one Celery worker "
        "(concurrency 1, bubblewrap sandbox) in a cgroup of its own capped at "
        f"{results['cpu_per_host']} CPU (a fixed quota each 100 ms; the worker, its beat on host0 and every sandbox "
        "it starts share it"
        + ("; with a hundred times the default scheduling weight, so that the machine's other load yields to it "
           "up to that quota, as a host's own cores would). " if results["reserved"] else
           "; a bare ceiling, with the default scheduling weight). ")
        + "The batch is submitted at once, one submission per student, as the submit view does it (the service, its "
        "transaction and the publish on commit, run in the bench's process, outside the slices); "
        "times are the stored rows' created → finished; a host's share is the "
        "verdicts its log says it stored; *graded once* checks one stored verdict per submission, all ACCEPTED. "
        "Verdicts a minute = the batch / (first submit → last verdict). *Held back* is the time the quota "
        "throttled the slice: a slice that is held back is using its whole share; *of its quota* = CPU-s used / "
        "(the run's wall time x the slice), below 100 % where a host waited (the batch's tail) or the machine "
        "could not give it its share. *Machine busy*: all cores' busy time over the run (from /proc/stat); "
        "*CPU pressure*: the share of the run during which some task of the machine waited for a CPU "
        "(/proc/pressure/cpu, `some`). The bench's process stands for the site and the network (it submits, "
        "forwards the hosts' database connections and runs their Redis) and runs at nice "
        f"{SERVICES_NICE}, so that the hosts do not wait on it behind the machine's other load; PostgreSQL keeps "
        "its usual priority. *Bench process CPU-s*: what it used in the run (Redis apart).",
        "",
        "What limits it: one physical machine, so the hosts are CPU slices of the same cores, not machines; "
        "PostgreSQL, Redis, the database proxy and the site are shared and unsliced, and the machine was "
        "loaded by other work (load average over the whole bench "
        f"{', '.join(str(x) for x in results['load_before'])} before / "
        f"{', '.join(str(x) for x in results['load_after'])} after; 1-minute load per run in the table). "
        + ("Even weighted so, a slice is not a core: when the machine's busy, a host's sandboxes, PostgreSQL and "
           "Redis still wait for a CPU among everything else (the pressure column). " if results["reserved"] else
           "A bare slice is a ceiling, not a reservation: on a busy machine a host gets less than its share. ")
        + "`DATABASE_URL=postgres://…/gd_bench python -m bench hosts`.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
