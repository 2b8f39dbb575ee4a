"""Grading under load (issue 12), run by ``make bench``: mixed submissions from many students
through the real site (runserver), PostgreSQL, a Redis of its own and 1, 2 and 4 Celery
workers (as many as BENCH_GRADING_WORKERS names) on the bubblewrap sandbox. For each worker
count: throughput, p50/p95 from submit to verdict, and how the wait grows with the position
in the queue (a submission's place in the burst).

Then one student alone on a quiet site (issue 13): a numpy exercise (static-graph-executor)
submitted BENCH_GRADING_IDLE times, each after the previous verdict, one worker on the
Docker sandbox with its default warm pool: p50 and p95 from submit to verdict.

Results: ``bench/results/grading.json`` and ``bench/results/grading.md``.

    python -m bench grading   (BENCH_GRADING_SUBMISSIONS=200, BENCH_GRADING_WORKERS=1,2,4 (empty: the one-student
                               row alone, the load rows kept from the last run), BENCH_GRADING_IDLE=10,
                               BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/graphdojo_bench)
"""
from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from testbed.exercises import SOLUTION, tiny_content
from testbed.http import Client
from testbed.processes import ROOT, RedisServer, Worker, free_port, wait_for

RESULTS = Path(__file__).resolve().parent / "results"
SUBMISSIONS = int(os.environ.get("BENCH_GRADING_SUBMISSIONS", "200"))
WORKER_COUNTS = [int(n) for n in os.environ.get("BENCH_GRADING_WORKERS", "1,2,4").split(",") if n]
IDLE = int(os.environ.get("BENCH_GRADING_IDLE", "10"))
DATABASE_URL = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/graphdojo_bench")
STUDENTS = 50
PASSWORD = "bench-password-1"


def mix(i: int) -> tuple[str, str]:
    """(exercise, code): three quick ones to one real exercise; right and wrong answers."""
    if i % 4 == 3:
        return "static-graph-executor", (ROOT / "exercises/coding/static-graph-executor/solution.py").read_text()
    return "tiny-answer", SOLUTION if i % 2 == 0 else "def answer():\n    return 41\n"


def fresh_database(env: dict[str, str]) -> None:
    url = urlparse(DATABASE_URL)
    name = url.path.lstrip("/")
    admin = ["psql", "-h", url.hostname or "127.0.0.1", "-p", str(url.port or 5432), "-U", url.username or "postgres",
             "-d", "postgres", "-q", "-c"]
    subprocess.run([*admin, f'DROP DATABASE IF EXISTS "{name}"'], check=True, capture_output=True)
    subprocess.run([*admin, f'CREATE DATABASE "{name}"'], check=True, capture_output=True)
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "--noinput"], cwd=ROOT, env=env, check=True, capture_output=True)
    subprocess.run([*manage, "sync_content"], cwd=ROOT, env=env, check=True, capture_output=True)
    users = "; ".join(f"User.objects.create_user('s{i}', password='{PASSWORD}', role='student')"
                      for i in range(STUDENTS))
    subprocess.run([*manage, "shell", "-c", f"from accounts.models import User; {users}"], cwd=ROOT, env=env,
                   check=True, capture_output=True)


def finished(env: dict[str, str]) -> list[tuple[int, float, float]]:
    """(id, created, finished) epoch seconds of every finished submission."""
    code = ("from grading.models import Submission as S; import json; print(json.dumps([(s.id, "
            "s.created_at.timestamp(), s.finished_at.timestamp()) for s in S.objects.exclude(finished_at=None)]))")
    done = subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=True)
    return [tuple(row) for row in json.loads(done.stdout.strip().splitlines()[-1])]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, round(q / 100 * len(ordered) + 0.4999) - 1)]


def run_once(workers: int, tmp: Path) -> dict[str, Any]:
    redis = RedisServer(tmp)
    redis.start()
    content = tiny_content(tmp / f"content-{workers}")
    shutil.copytree(ROOT / "exercises/coding/static-graph-executor", content / "coding/static-graph-executor")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_", "CELERY_"))},
           "PYTHONPATH": str(ROOT / "platform"), "DJANGO_SETTINGS_MODULE": "config.settings.test",
           "DATABASE_URL": DATABASE_URL, "CELERY_BROKER_URL": redis.url, "GRAPHDOJO_VAR_DIR": str(tmp / "var"),
           "GRAPHDOJO_CONTENT_DIR": str(content), "SANDBOX_BACKEND": "local",
           "SUBMISSIONS_IN_FLIGHT_MAX": "1000", "SUBMISSIONS_PER_MINUTE_MAX": "1000", "LOG_LEVEL": "WARNING"}
    fresh_database(env)
    port = free_port()
    web = subprocess.Popen([sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"], cwd=ROOT,
                           env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    pool = [Worker(env, tmp / f"w{workers}-{i}.log", f"bench{i}", beat=i == 0) for i in range(workers)]
    try:
        for worker in pool:
            worker.start()
        base = f"http://127.0.0.1:{port}"
        wait_for(lambda: _answers(base), 60, "the site")
        clients = []
        for i in range(STUDENTS):
            client = Client(base)
            client.log_in(f"s{i}", PASSWORD)
            clients.append(client)
        started = time.time()
        for i in range(SUBMISSIONS):
            slug, code = mix(i)
            status, headers, page = clients[i % STUDENTS].post_form(
                f"/submissions/new/{slug}/", {"code": code}, form_page=f"/exercises/{slug}/")
            assert status == 302, (status, page[:300])
        submitted = time.time() - started
        wait_for(lambda: len(finished(env)) >= SUBMISSIONS, 60 * 60, "every verdict", interval=5)
        rows = sorted(finished(env))
    finally:
        for worker in pool:
            worker.stop()
        web.terminate()
        web.wait(30)
        redis.stop()
    waits = [done - created for _, created, done in rows]
    span = max(done for _, _, done in rows) - min(created for _, created, _ in rows)
    quarter = max(1, len(rows) // 4)
    growth = [statistics.median(waits[i:i + quarter]) for i in range(0, quarter * 4, quarter)]
    return {"workers": workers, "submissions": len(rows), "submit_s": round(submitted, 1),
            "per_minute": round(len(rows) / span * 60, 1), "p50_s": round(percentile(waits, 50), 1),
            "p95_s": round(percentile(waits, 95), 1), "median_wait_by_queue_quarter_s": [round(g, 1) for g in growth]}


def one_at_a_time(tmp: Path, count: int) -> dict[str, Any]:
    """Submit-to-verdict on an idle site: each submission waits for the previous verdict."""
    redis = RedisServer(tmp)
    redis.start()
    content = tiny_content(tmp / "content-idle")
    shutil.copytree(ROOT / "exercises/coding/static-graph-executor", content / "coding/static-graph-executor")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_", "CELERY_", "SANDBOX_"))},
           "PYTHONPATH": str(ROOT / "platform"), "DJANGO_SETTINGS_MODULE": "config.settings.local",
           "DATABASE_URL": DATABASE_URL, "CELERY_BROKER_URL": redis.url, "GRAPHDOJO_VAR_DIR": str(tmp / "var"),
           "GRAPHDOJO_CONTENT_DIR": str(content), "SANDBOX_BACKEND": "docker", "DJANGO_SECRET_KEY": "bench-" * 8,
           "SUBMISSIONS_IN_FLIGHT_MAX": "1000", "SUBMISSIONS_PER_MINUTE_MAX": "1000", "LOG_LEVEL": "WARNING"}
    fresh_database(env)
    port = free_port()
    web = subprocess.Popen([sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"], cwd=ROOT,
                           env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    worker = Worker(env, tmp / "idle.log", "idle")
    code = (ROOT / "exercises/coding/static-graph-executor/solution.py").read_text()
    try:
        worker.start()
        base = f"http://127.0.0.1:{port}"
        wait_for(lambda: _answers(base), 60, "the site")
        client = Client(base)
        client.log_in("s0", PASSWORD)
        def more_verdicts_than(seen: int) -> bool:
            return len(finished(env)) > seen

        for i in range(count + 1):  # the first warms the worker's pool and is not counted
            status, _, page = client.post_form("/submissions/new/static-graph-executor/", {"code": code},
                                               form_page="/exercises/static-graph-executor/")
            assert status == 302, (status, page[:300])
            wait_for(partial(more_verdicts_than, i), 300, "the verdict", interval=0.5)
            time.sleep(5 if i == 0 else 3)  # the pool refills, as it would between two students' clicks
        rows = sorted(finished(env))[1:]
    finally:
        worker.stop()
        web.terminate()
        web.wait(30)
        redis.stop()
    waits = [done - created for _, created, done in rows]
    return {"submissions": len(rows), "p50_s": round(percentile(waits, 50), 2),
            "p95_s": round(percentile(waits, 95), 2), "backend": "docker-runc, warm pool (default size)"}


def _answers(base: str) -> bool:
    try:
        return Client(base).get("/login/")[0] == 200
    except OSError:
        return False


def main() -> None:
    RESULTS.mkdir(exist_ok=True)
    runs = []
    with tempfile.TemporaryDirectory(prefix="bench-grading-") as tmp:
        for workers in WORKER_COUNTS:
            (Path(tmp) / f"w{workers}").mkdir()
            runs.append(run_once(workers, Path(tmp) / f"w{workers}"))
            print(runs[-1], flush=True)
        (Path(tmp) / "idle").mkdir()
        idle = one_at_a_time(Path(tmp) / "idle", IDLE) if IDLE else None
        print(idle, flush=True)
    if not WORKER_COUNTS and (RESULTS / "grading.json").exists():  # the quiet-site row alone: keep the load rows
        runs = json.loads((RESULTS / "grading.json").read_text())["runs"]
    result = {"submissions": SUBMISSIONS, "students": STUDENTS, "cores": os.cpu_count(), "runs": runs,
              "mix": "tiny-answer right and wrong (3 in 4), static-graph-executor solution (1 in 4); bubblewrap",
              "one_at_a_time": idle}
    (RESULTS / "grading.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [f"# Grading under load: {SUBMISSIONS} submissions by {STUDENTS} students, {os.cpu_count()} cores",
             "", "| workers | verdicts a minute | p50 submit→verdict | p95 | median wait by queue quarter (1st→4th) |",
             "|---|---|---|---|---|"]
    lines += [f"| {r['workers']} | {r['per_minute']} | {r['p50_s']} s | {r['p95_s']} s | "
              f"{' → '.join(f'{g} s' for g in r['median_wait_by_queue_quarter_s'])} |" for r in runs]
    lines += ["", f"Mix: {result['mix']}. Measured with `python -m bench grading`."]
    if idle:
        lines += ["", f"One student alone, {idle['submissions']} submissions of static-graph-executor (numpy), "
                  f"each after the previous verdict, one worker, {idle['backend']}: "
                  f"submit→verdict p50 {idle['p50_s']} s, p95 {idle['p95_s']} s (target p50 ≤ 1.5 s)."]
    (RESULTS / "grading.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
