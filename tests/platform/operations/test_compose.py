"""docker-compose.yml comes up from images built here with no registry, passes
`check --deploy`, grades one solution end to end through the site, shows the lessons, and
runs a playground program on a worker (the web container has no sandbox) as a non-root uid."""
from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from testbed.http import Client
from testbed.processes import docker_is_up, free_port

pytestmark = [pytest.mark.slow, pytest.mark.docker]
ROOT = Path(__file__).resolve().parents[3]
EXERCISE = "static-graph-executor"
STUDENT = ("eve", "a-long-password-eve-1")


@pytest.fixture
def stack(requires, tmp_path):
    requires("Docker engine", docker_is_up(), "bash sandbox/image/ci-setup.sh")
    requires("docker-compose", shutil.which("docker-compose") is not None, "apt-get install docker-compose")
    requires("the sandbox image", subprocess.run(["docker", "image", "inspect", "graphdojo-sandbox:latest"],
                                                 capture_output=True).returncode == 0, "make image")
    built = subprocess.run(["bash", "deploy/build.sh"], cwd=ROOT, capture_output=True, text=True, timeout=1200)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    port = free_port()
    env = {
        **os.environ,
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        "DOCKER_GID": str(os.stat("/var/run/docker.sock").st_gid),
        "GRAPHDOJO_PORT": str(port),
        "GRAPHDOJO_POSTGRES_IMAGE": "graphdojo-postgres:offline",
        "GRAPHDOJO_REDIS_IMAGE": "graphdojo-redis:offline",
        "WORKER_CONCURRENCY": "1",
    }
    compose = ["docker-compose", "-p", f"gdcompose{os.getpid()}", "-f", str(ROOT / "docker-compose.yml")]

    def run(*args: str, timeout: int = 120) -> subprocess.CompletedProcess:
        return subprocess.run([*compose, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)

    try:
        up = run("up", "-d", "--no-build", timeout=600)
        assert up.returncode == 0, up.stdout + up.stderr
        yield run, f"http://127.0.0.1:{port}"
    finally:
        logs = run("logs", "--no-color", "--tail", "60")
        (tmp_path / "compose.log").write_text(logs.stdout + logs.stderr)
        print(f"compose logs: {tmp_path / 'compose.log'}")
        run("down", "-v", "--remove-orphans", timeout=300)


def wait_healthy(base_url: str, timeout: float = 240) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if urllib.request.urlopen(base_url + "/healthz/", timeout=5).status == 200:
                return
        except OSError:
            pass
        assert time.monotonic() < deadline, "the web service never became healthy"
        time.sleep(2)


def test_the_stack_comes_up_and_grades_a_solution(stack):
    run, base_url = stack
    wait_healthy(base_url)

    check = run("exec", "-T", "web", "python", "manage.py", "check", "--deploy", "--fail-level", "WARNING")
    assert check.returncode == 0 and "no issues" in check.stdout, check.stdout + check.stderr

    made = run("exec", "-T", "web", "python", "manage.py", "shell", "-c",
               "from accounts.models import User; "
               f"User.objects.create_user({STUDENT[0]!r}, password={STUDENT[1]!r}, role='student')")
    assert made.returncode == 0, made.stderr

    # Behind the TLS proxy compose expects: it says the client spoke HTTPS.
    client = Client(base_url, headers={"X-Forwarded-Proto": "https"})
    status, headers, _ = client.get("/login/")
    assert status == 200 and "max-age=31536000" in headers.get("Strict-Transport-Security", "")
    client.log_in(*STUDENT)
    status, _, page = client.get(f"/exercises/{EXERCISE}/")
    assert status == 200
    stylesheet = re.search(r'href="(/static/[^"]+\.css)"', page)
    assert stylesheet and client.get(stylesheet.group(1))[0] == 200, "static files are not served"

    solution = (ROOT / "exercises" / "coding" / EXERCISE / "solution.py").read_text()
    status, headers, _ = client.post_form(f"/submissions/new/{EXERCISE}/", {"code": solution},
                                          form_page=f"/exercises/{EXERCISE}/")
    assert status == 302, status
    detail = headers["Location"]
    deadline = time.monotonic() + 300
    while True:
        status, _, fragment = client.get(detail.rstrip("/") + "/status/")
        assert status == 200
        if 'data-status="graded"' in fragment or 'data-status="failed"' in fragment:
            break
        assert time.monotonic() < deadline, "no verdict within 5 minutes:\n" + fragment
        time.sleep(2)
    assert 'data-verdict="ACCEPTED"' in fragment, fragment

    # The lessons were synced, and the playground runs through a worker: the web container
    # has no Docker socket, so a run done in the web request could only fail there.
    status, _, lessons = client.get("/lessons/")
    assert status == 200 and "/lessons/computation-graphs/" in lessons, lessons[:2000]
    status, _, started = client.post_form("/lessons/playground/run/",
                                          {"code": "import os\nprint('uid', os.getuid(), os.geteuid())\n"},
                                          form_page="/lessons/playground/")
    assert status == 202, (status, started)
    program = json.loads(started)
    deadline = time.monotonic() + 180
    while not program["finished"]:
        assert time.monotonic() < deadline, f"the playground run never finished: {program}"
        time.sleep(1)
        status, _, polled = client.get(program["status_url"])
        assert status == 200
        program = json.loads(polled)
    assert program["state"] == "done", program
    uids = re.search(r"uid (\d+) (\d+)", json.dumps(program["result"]))
    assert uids and int(uids.group(1)) != 0 and int(uids.group(2)) != 0, program["result"]

    # Quiz banks were synced too, and the broker keeps what it holds across a restart.
    quizzes = run("exec", "-T", "web", "python", "manage.py", "shell", "-c",
                  "from quizzes.models import Bank; print(Bank.objects.count())")
    assert quizzes.returncode == 0 and int(quizzes.stdout.split()[-1]) > 0, quizzes.stdout + quizzes.stderr
    persisted = run("exec", "-T", "redis", "redis-cli", "CONFIG", "GET", "appendonly")
    assert persisted.stdout.split()[-1] == "yes", persisted.stdout
