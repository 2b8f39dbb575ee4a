"""`make run`'s last step: the site and a grading worker on embedded defaults; Ctrl-C stops both."""
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


def test_serve_runs_the_site_and_a_worker_and_ctrl_c_stops_both(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_", "CELERY_", "DJANGO_"))}
    env.update(GRAPHDOJO_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="config.settings.local", SANDBOX_BACKEND="local")
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput"], cwd=ROOT, env=env, check=True,
                   capture_output=True, timeout=120)
    port = free_port()
    log = open(tmp_path / "serve.log", "w+")
    serve = subprocess.Popen([sys.executable, "manage.py", "serve", f"127.0.0.1:{port}"], cwd=ROOT, env=env,
                             stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while True:
            assert serve.poll() is None, (tmp_path / "serve.log").read_text()
            assert time.monotonic() < deadline, (tmp_path / "serve.log").read_text()
            try:
                page = urllib.request.urlopen(f"http://127.0.0.1:{port}/login/", timeout=2).read().decode()
                if " ready." in (tmp_path / "serve.log").read_text():
                    break
            except OSError:
                pass
            time.sleep(0.5)
        assert "GraphDojo" in page
        assert (tmp_path / "db.sqlite3").exists() and (tmp_path / "broker").is_dir()  # embedded defaults

        os.killpg(serve.pid, signal.SIGINT)  # what Ctrl-C in a terminal sends
        serve.wait(timeout=30)
        deadline = time.monotonic() + 15
        while group_alive(serve.pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not group_alive(serve.pid), "the web server or the worker outlived Ctrl-C"
    finally:
        if group_alive(serve.pid):
            os.killpg(serve.pid, signal.SIGKILL)
        log.close()
