"""A grading site made of real processes for operations tests: PostgreSQL (through a proxy
the test can cut), a Redis of the test's own, Celery workers it starts and kills, and two
cheap exercises written here (one for CPU workers, one that needs a GPU)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from testbed.exercises import SOLUTION, tiny_content
from testbed.site import GradingSite
from tests.conftest import require


def slow_solution(seconds: float) -> str:
    """Right, after ``seconds`` of sleep at import: long enough to be caught in flight."""
    return f"import time\ntime.sleep({seconds})\n" + SOLUTION


@pytest.fixture
def tiny_exercises(transactional_db, tmp_path, settings):
    from catalog.services import content_sync

    settings.EXERCISE_CACHE_DIR = tmp_path / "exercise-cache"
    report = content_sync(tiny_content(tmp_path / "content"))
    assert not report.errors, report.errors


@pytest.fixture
def grading_site(tiny_exercises, tmp_path, settings, requires):
    yield from _grading_site(tmp_path, settings, requires, shortened_times=True)


@pytest.fixture(scope="module")
def shared_default_site(tmp_path_factory):
    """A grading site with the times production runs with (nothing shortened for the test),
    its Redis, database proxy and worker (beat inside, as `manage.py serve` runs it) started
    once for the module: a worker's start is most of what a fault test costs besides the fault.
    Its tests leave it whole (a killed pool child is replaced by Celery; a test that kills the
    whole worker starts the next one, which stays)."""
    from django.conf import settings

    database = settings.DATABASES["default"]
    require("PostgreSQL", database["ENGINE"].endswith("postgresql"), "set DATABASE_URL=postgres://…")
    require("redis-server", bool(os.popen("command -v redis-server").read()), "apt-get install redis-server")
    tmp_path = tmp_path_factory.mktemp("site")
    site = GradingSite(tmp_path, database, "local", shortened_times=False)
    try:
        site.worker("shared", beat=True)
        yield site
    finally:
        site.close()
        print_logs(tmp_path)


@pytest.fixture
def default_grading_site(tiny_exercises, shared_default_site, settings):
    """The module's default-configuration site, serving this test (its own exercises and student)."""
    shared_default_site.serve_this_test(settings)
    worker = shared_default_site.running_worker
    assert len(worker.pool_children()) == 2, "the shared worker lost its pool process or its beat"
    return shared_default_site


@pytest.fixture
def own_default_grading_site(tiny_exercises, tmp_path, settings, requires):
    """A default-configuration site of the test's own, for a test whose worker is unlike the
    shared one (another sandbox backend)."""
    yield from _grading_site(tmp_path, settings, requires, shortened_times=False)


def _grading_site(tmp_path, settings, requires, shortened_times: bool):
    database = settings.DATABASES["default"]
    requires("PostgreSQL", database["ENGINE"].endswith("postgresql"), "set DATABASE_URL=postgres://…")
    requires("redis-server", bool(os.popen("command -v redis-server").read()), "apt-get install redis-server")
    site = GradingSite(tmp_path, database, "local", settings, shortened_times=shortened_times)
    try:
        yield site
    finally:
        site.close()
        print_logs(tmp_path)


def print_logs(tmp_path: Path) -> None:
    """The workers' logs, for a failed test's report; the sweep's routine lines left out."""
    for log in sorted(tmp_path.glob("*.log")):
        lines = [line for line in log.read_text().splitlines()
                 if "sweep_submissions" not in line
                 or "'reclaimed': 0, 'resent': 0" not in line and "received" not in line]
        print(f"--- {log.name}\n" + "\n".join(line for line in lines if "Sending due task" not in line)[-6000:])


@pytest.fixture
def student(django_user_model):
    return django_user_model.objects.create_user(username="sam", password="a-long-password-1", role="student")


def report(name: str, **numbers) -> None:
    """A line for the operator's fault table: what broke and how long recovery took."""
    print(f"\nFAULT {name}: " + ", ".join(f"{k}={v:.1f}" if isinstance(v, float) else f"{k}={v}"
                                         for k, v in numbers.items()))
