"""A grading site made of real processes, for the operations tests and the scale-out bench:
PostgreSQL (through a proxy that can be cut), a Redis of its own, Celery workers it starts and
kills, and this process pointed at them to submit as the site does and read what was stored.
Imports the platform: import it only once Django is set up (pytest-django, bench/__main__)."""
from __future__ import annotations

import os
import re
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from catalog.models import Exercise
from config.celery import app
from grading.models import Submission
from grading.services import submission_create
from testbed.exercises import SOLUTION
from testbed.processes import ROOT, Proxy, RedisServer, Worker, wait_for

# Small times so a test recovers in seconds; their order is what production keeps.
SHORTENED_TIMES = {
    "GRADING_MAX_S": "10",
    "SUBMISSION_STALE_AFTER_S": "14",
    "CELERY_VISIBILITY_TIMEOUT_S": "20",
    "GRADING_SWEEP_EVERY_S": "3",
    "GRADING_RETRY_BACKOFF_S": "1",
    "GRADING_RETRY_BACKOFF_MAX_S": "4",
    "GRADING_MAX_RETRIES": "12",
    "GRADING_LEASE_S": "8",
    "GRADING_HEARTBEAT_S": "2",
}


class GradingSite:
    """Everything a fault test needs to run, break and check one grading deployment."""

    def __init__(self, tmp_path: Path, database: dict[str, Any], sandbox_backend: str, settings: Any = None,
                 shortened_times: bool = True, host: str = "127.0.0.1") -> None:
        """``host``: where the workers reach Redis and the database proxy, this machine's loopback
        or, for workers on VirtualHosts, its bridge (never their own loopback)."""
        self.tmp = tmp_path
        self.redis = RedisServer(tmp_path, host=host)
        self.redis.start()
        self.db_proxy = Proxy((database["HOST"] or "127.0.0.1", int(database["PORT"] or 5432)), host=host)
        self.db_url = (f"postgres://{database['USER']}:{database['PASSWORD'] or ''}@{host}:{self.db_proxy.port}"
                       f"/{database['NAME']}")
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_", "CELERY_"))},
            "PYTHONPATH": str(ROOT / "platform"),
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "DATABASE_URL": self.db_url,
            "CELERY_BROKER_URL": self.redis.url,
            "GRAPHDOJO_VAR_DIR": str(tmp_path / "var"),
            "SANDBOX_BACKEND": sandbox_backend,
            "SUBMISSIONS_IN_FLIGHT_MAX": "100",
            "SUBMISSIONS_PER_MINUTE_MAX": "100",
        }
        if shortened_times:  # else the times production runs with (the settings' defaults)
            self.env.update(SHORTENED_TIMES)
        else:
            self.env = {k: v for k, v in self.env.items() if k not in SHORTENED_TIMES}
        self.workers: list[Worker] = []
        self.settings = settings
        if settings is not None:
            self._point_this_process_at_the_site()

    def serve_this_test(self, settings: Any) -> None:
        """A site shared by a module's tests: this test's submits and settings go to it."""
        self.settings = settings
        self._point_this_process_at_the_site()

    def _point_this_process_at_the_site(self) -> None:
        _point_celery_at(self.redis.url)
        for name in ("SUBMISSION_STALE_AFTER_S", "GRADING_SWEEP_EVERY_S", "SUBMISSIONS_IN_FLIGHT_MAX",
                     "SUBMISSIONS_PER_MINUTE_MAX"):
            if name in self.env:
                setattr(self.settings, name, int(self.env[name]))

    def worker(self, name: str, queues: str = "cpu", beat: bool = False, **env: str) -> Worker:
        worker = Worker({**self.env, **env}, self.tmp / f"{name}.log", name, queues=queues, beat=beat)
        worker.start()
        self.workers.append(worker)
        return worker

    @property
    def running_worker(self) -> Worker:
        """The worker a shared site's test finds serving (the latest one started that lives)."""
        return next(w for w in reversed(self.workers) if w.process and w.process.poll() is None)

    def submit(self, user: Any, slug: str = "tiny-answer", code: str = SOLUTION) -> Submission:
        """What the submit view does: the service, its transaction and the publish on commit."""
        return submission_create(user=user, exercise=Exercise.objects.get(slug=slug), code=code)

    def statuses(self, ids: Iterable[int]) -> dict[int, str]:
        return dict(Submission.objects.filter(id__in=ids).values_list("id", "status"))

    def wait_all_finished(self, ids: list[int], timeout: float) -> float:
        """Seconds until every submission in ``ids`` has a stored outcome."""
        started = time.monotonic()
        wait_for(lambda: all(s in ("graded", "failed") for s in self.statuses(ids).values()), timeout,
                 f"every submission to be graded; now {Counter(self.statuses(ids).values())}", interval=0.5)
        return time.monotonic() - started

    def stored_verdicts(self) -> Counter[int]:
        """How many times each submission's verdict was stored, from every worker's log."""
        stored: Counter[int] = Counter()
        for log in self.tmp.glob("*.log"):
            for match in re.finditer(r"submission (\d+): stored (?:graded|failed)", log.read_text()):
                stored[int(match.group(1))] += 1
        return stored

    def assert_graded_once(self, ids: list[int], verdict: str = "ACCEPTED") -> None:
        rows = {s.id: s for s in Submission.objects.filter(id__in=ids)}
        assert {s.status for s in rows.values()} == {"graded"}, {
            i: (s.status, s.verdict, s.result) for i, s in rows.items()}
        assert {s.verdict for s in rows.values()} == {verdict}
        stored = self.stored_verdicts()
        assert all(stored[i] == 1 for i in ids), f"verdicts stored per submission: {dict(stored)}"

    def close(self) -> None:
        for worker in self.workers:
            worker.stop()
        _point_celery_at(None)
        self.db_proxy.close()
        self.redis.stop()


def _point_celery_at(broker_url: str | None) -> None:
    """This process's Celery app publishing to ``broker_url`` (None: its settings' own again): the
    write and read URLs, since CELERY_BROKER_URL in the environment beats broker_url. Pooled
    connections are dropped; app.close() keeps the producer pool's."""
    conf: Any = app.conf  # the stubs call these URLs read-only; Celery's settings take them
    conf.broker_write_url = conf.broker_read_url = broker_url
    app.close()
    amqp: Any = app.amqp
    amqp._producer_pool = None


