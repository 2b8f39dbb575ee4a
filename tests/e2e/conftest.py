"""A real Celery worker process on the Redis broker and the PostgreSQL test database."""
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from catalog.services import content_sync
from interviews.services import interview_templates_sync
from quizzes.services import quiz_content_sync

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def content(transactional_db, content_dir):
    """The real content synced: exercises, quiz banks and interview templates."""
    assert not content_sync(content_dir).errors
    quizzes = quiz_content_sync(content_dir)
    assert not interview_templates_sync(content=quizzes.content).errors
    return content_dir


@pytest.fixture
def celery_worker_process(transactional_db, settings, requires, tmp_path):
    database = settings.DATABASES["default"]
    broker = os.environ.get("CELERY_BROKER_URL", "")
    requires("PostgreSQL", database["ENGINE"].endswith("postgresql"), "set DATABASE_URL=postgres://…")
    requires("Redis broker", broker.startswith("redis://") and _redis_answers(broker), "set CELERY_BROKER_URL=redis://…")
    # The worker must see the test database pytest-django created, not the configured one.
    url = (f"postgres://{database['USER']}:{database['PASSWORD'] or ''}"
           f"@{database['HOST']}:{database['PORT'] or 5432}/{database['NAME']}")
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "platform"),
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": url,
        "CELERY_BROKER_URL": broker,
        "GRAPHDOJO_VAR_DIR": str(settings.VAR_DIR),
    }
    log_path = tmp_path / "worker.log"
    with open(log_path, "w") as log:
        worker = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", "cpu", "--concurrency", "1",
             "--pool", "solo", "--purge", "--loglevel", "INFO", "--hostname", f"e2e-{os.getpid()}@%h"],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
        )
    try:
        _wait_for(lambda: " ready." in log_path.read_text() or worker.poll() is not None, 90)
        assert worker.poll() is None, f"the worker exited:\n{log_path.read_text()}"
        yield worker
    finally:
        worker.terminate()
        try:
            worker.wait(20)
        except subprocess.TimeoutExpired:
            worker.kill()
        print(log_path.read_text()[-4000:])


def _redis_answers(url: str) -> bool:
    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=2).ping())
    except redis.RedisError:
        return False


def _wait_for(condition, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"nothing happened in {timeout_s} s")
        time.sleep(0.2)
