"""`make run`'s embedded default, SQLite: the site and the worker write one file at once and
no one gets "database is locked" (issue 25 part 3). Real processes, as `serve` runs them."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from testbed.exercises import tiny_content
from testbed.processes import ROOT

pytestmark = [pytest.mark.slow]
WRITERS = [("drafts", "ada"), ("drafts", "bo"), ("submits", "ada"), ("submits", "bo"), ("verdicts", "cy")]
EACH = 60


def sqlite_env(tmp_path: Path) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_", "CELERY_", "SQLITE_"))}
    return {
        **keep,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "platform"), str(ROOT)]),
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "GRAPHDOJO_VAR_DIR": str(tmp_path / "var"),  # SQLite and the filesystem broker, as make run
        "GRAPHDOJO_CONTENT_DIR": str(tiny_content(tmp_path / "content")),
        "SUBMISSIONS_IN_FLIGHT_MAX": "10000",
        "SUBMISSIONS_PER_MINUTE_MAX": "10000",
    }


def manage(env: dict[str, str], *args: str) -> None:
    done = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]


def test_concurrent_drafts_submits_and_verdicts_never_find_the_database_locked(tmp_path):
    env = sqlite_env(tmp_path)
    manage(env, "migrate", "--noinput")
    manage(env, "sync_content")
    manage(env, "shell", "-c", "from accounts.models import User\n"
           "[User.objects.create_user(username=n, password='a-long-password-1') for n in ('ada', 'bo', 'cy')]")
    writers = [subprocess.Popen([sys.executable, "-m", "tests.platform.sqlite_load", role, str(EACH), user],
                                cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
               for role, user in WRITERS]
    outputs = [writer.communicate(timeout=600)[0] for writer in writers]
    everything = "\n".join(outputs)
    assert "database is locked" not in everything, everything[-4000:]
    assert [writer.returncode for writer in writers] == [0] * len(writers), everything[-4000:]
    assert everything.count("DONE ") == len(WRITERS)
    journal = subprocess.run(
        [sys.executable, "-c", "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("
         "'PRAGMA journal_mode').fetchone()[0])", str(tmp_path / "var" / "db.sqlite3")],
        capture_output=True, text=True, check=True)
    assert journal.stdout.strip() == "wal"
