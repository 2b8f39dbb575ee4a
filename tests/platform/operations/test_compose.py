"""docker-compose.yml comes up from images built here with no registry, passes
`check --deploy`, grades one solution end to end through the site, shows the lessons, and
runs a playground program on a worker (the web container has no sandbox) as a non-root uid.
A student's journey in Chromium through the TLS proxy. Then the faults of the stack's own
services, in the configuration it ships (issue 25): kill -9 of gunicorn and a PostgreSQL
restart while submissions are in flight. The tests share one stack (building and starting it
is most of what they cost) and leave it serving."""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import ssl
import subprocess
import time
import urllib.request
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pytest
from playwright.sync_api import Page, expect

from testbed.http import Client
from testbed.processes import docker_is_up, free_port, wait_for
from tests.conftest import require
from tests.e2e.journeys import assignment_create, course_create, course_join, fill_answer, log_in_as, write_code
from tests.e2e.test_lessons import step_static_vs_dynamic
from tests.platform.operations.conftest import report

pytestmark = [pytest.mark.slow, pytest.mark.docker]
ROOT = Path(__file__).resolve().parents[3]
EXERCISE = "static-graph-executor"
EXERCISE_TITLE = "A static graph executor"
QUIZ_TITLE = "Graphs: define-then-run and define-by-run"
STUDENT = "eve"
SOLUTION = (ROOT / "exercises" / "coding" / EXERCISE / "solution.py").read_text()


class Stack(NamedTuple):
    run: Callable[..., subprocess.CompletedProcess]  # docker-compose with the stack's project and files
    site: str  # https://… through the TLS proxy, as students reach it
    plain: str  # http://… of the proxy, which only redirects
    web: str  # http://… of the web service itself, as the machine's health checks reach it
    tls: ssl.SSLContext  # trusts the certificate the test made for the proxy


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    require("Docker engine", docker_is_up(), "bash sandbox/image/ci-setup.sh")
    require("docker-compose", shutil.which("docker-compose") is not None, "apt-get install docker-compose")
    require("openssl", shutil.which("openssl") is not None, "apt-get install openssl")
    require("the sandbox image", subprocess.run(["docker", "image", "inspect", "graphdojo-sandbox:latest"],
                                                capture_output=True).returncode == 0, "make image")
    # The web image of this checkout: another checkout's run on the same engine builds its own.
    checkout = hashlib.sha256(bytes(ROOT)).hexdigest()[:12]
    web_image = os.environ.get("GRAPHDOJO_WEB_IMAGE") or f"graphdojo-web:test-{checkout}"
    built = subprocess.run(["bash", "deploy/build.sh"], cwd=ROOT, env={**os.environ, "GRAPHDOJO_WEB_IMAGE": web_image},
                           capture_output=True, text=True, timeout=1200)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    folder = tmp_path_factory.mktemp("compose")
    certificates = folder / "tls"
    certificates.mkdir()
    made = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                           "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
                           "-keyout", str(certificates / "privkey.pem"), "-out", str(certificates / "fullchain.pem")],
                          capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    web_port, https_port, http_port = free_port(), free_port(), free_port()
    env = {
        **os.environ,
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        "DOCKER_GID": str(os.stat("/var/run/docker.sock").st_gid),
        "GRAPHDOJO_PORT": str(web_port),
        "GRAPHDOJO_HTTPS_PORT": str(https_port),
        "GRAPHDOJO_HTTP_PORT": str(http_port),
        "GRAPHDOJO_TLS_DIR": str(certificates),
        "GRAPHDOJO_WEB_IMAGE": web_image,
        "GRAPHDOJO_POSTGRES_IMAGE": "graphdojo-postgres:offline",
        "GRAPHDOJO_REDIS_IMAGE": "graphdojo-redis:offline",
        "GRAPHDOJO_PROXY_IMAGE": "graphdojo-proxy:offline",
        "WORKER_MAX_CONCURRENCY": "2",  # the autoscaler grows the pool while submissions wait
        "WORKER_MIN_CONCURRENCY": "1",
    }
    # A project and ports of this run's own: runs from other checkouts may share the engine.
    compose = ["docker-compose", "-p", f"gdcompose{os.getpid()}", "-f", str(ROOT / "docker-compose.yml"),
               "-f", str(ROOT / "deploy" / "tls" / "docker-compose.tls.yml")]

    def run(*args: str, timeout: int = 120) -> subprocess.CompletedProcess:
        return subprocess.run([*compose, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)

    logs = folder / "compose.log"
    try:
        up = run("up", "-d", "--no-build", timeout=600)
        assert up.returncode == 0, up.stdout + up.stderr
        yield Stack(run, f"https://127.0.0.1:{https_port}", f"http://127.0.0.1:{http_port}",
                    f"http://127.0.0.1:{web_port}",
                    ssl.create_default_context(cafile=str(certificates / "fullchain.pem")))
    finally:
        logged = run("logs", "--no-color", "--tail", "200")
        logs.write_text(logged.stdout + logged.stderr)
        print(f"compose logs: {logs}")
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
    run = stack.run
    wait_healthy(stack.web)

    check = run("exec", "-T", "web", "python", "manage.py", "check", "--deploy", "--fail-level", "WARNING")
    assert check.returncode == 0 and "no issues" in check.stdout, check.stdout + check.stderr

    # Through the TLS proxy of deploy/tls, as students reach the site. Plain HTTP only
    # redirects; a client's own X-Forwarded-Proto is replaced (were it passed on, Django would
    # think the client spoke HTTP and redirect it to HTTPS, forever).
    status, headers, _ = Client(stack.plain).get("/login/")
    assert status == 301 and headers["Location"].startswith("https://"), (status, headers)
    status, _, _ = Client(stack.site, headers={"X-Forwarded-Proto": "http"}, tls=stack.tls).get("/login/")
    assert status == 200, status
    client = student_client(stack, STUDENT)
    status, headers, _ = client.get("/accounts/profile/")
    assert status == 200 and "max-age=31536000" in headers.get("Strict-Transport-Security", "")
    status, _, page = client.get(f"/exercises/{EXERCISE}/")
    assert status == 200
    stylesheet = re.search(r'href="(/static/[^"]+\.css)"', page)
    assert stylesheet and client.get(stylesheet.group(1))[0] == 200, "static files are not served"

    fragment = verdict(client, submit(client), timeout=300)
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
    assert int(in_web(run, "from quizzes.models import Bank; print(Bank.objects.count())")) > 0
    persisted = run("exec", "-T", "redis", "redis-cli", "CONFIG", "GET", "appendonly")
    assert persisted.stdout.split()[-1] == "yes", persisted.stdout

    # The worker that just graded is called healthy (its check pings the node it runs as).
    worker = run("ps", "-q", "worker").stdout.strip()
    wait_for(lambda: subprocess.run(["docker", "inspect", "-f", "{{.State.Health.Status}}", worker],
                                    capture_output=True, text=True, timeout=30).stdout.strip() == "healthy",
             180, "the worker's health check to pass", interval=5)


@pytest.mark.browser
def test_a_student_journey_in_a_browser_through_the_tls_proxy(stack, chromium):
    """Chromium through the TLS proxy: sign in, step through the article's first visualisation
    (the stack's static files), run the playground (on a worker) and submit the solution in
    the exercise's editor, watching the verdict arrive."""
    password = user_create(stack.run, "lin", "student")
    page, errors = browser_page(chromium)
    try:
        log_in_as(page, stack.site, "lin", password)

        page.goto(f"{stack.site}/lessons/the-article-demos/")
        step_static_vs_dynamic(page)

        page.goto(f"{stack.site}/lessons/playground/")
        form = page.locator("#playground")
        form.get_by_role("button", name="Run").click()  # the example program, as the page offers it
        expect(form.locator(".run-bar")).to_have_attribute("data-state", "done", timeout=180_000)
        expect(form.locator(".run-output")).to_have_text("y = 15.0  dy/dx = 8.0")

        page.goto(f"{stack.site}/exercises/{EXERCISE}/")
        write_code(page, SOLUTION)
        page.get_by_role("button", name="Submit").click()
        expect(page).to_have_url(re.compile(r"/submissions/\d+/$"))
        expect(page.locator("#verdict")).to_have_attribute("data-kind", "ACCEPTED", timeout=300_000)
        assert not errors, errors
    finally:
        page.context.close()


@pytest.mark.browser
def test_a_course_from_its_creation_to_the_gradebook_in_a_browser(stack, chromium):
    """Chromium through the TLS proxy: an instructor creates a course with an assignment of a
    quiz and an exercise; a student joins with the code, takes the quiz and hands it in, then
    submits the exercise and watches its verdict arrive; the instructor's gradebook shows both."""
    teacher_password = user_create(stack.run, "prof", "instructor")
    student_password = user_create(stack.run, "noor", "student")
    teacher, teacher_errors = browser_page(chromium)
    student, student_errors = browser_page(chromium)
    try:
        log_in_as(teacher, stack.site, "prof", teacher_password)
        join_code = course_create(teacher, "Graphs 101", "计算图入门")
        assignment_create(teacher, "Week 1", "第一周", dt.datetime.now(dt.UTC), [QUIZ_TITLE, EXERCISE_TITLE])

        log_in_as(student, stack.site, "noor", student_password)
        course_join(student, join_code, "Graphs 101")
        student.get_by_role("button", name=QUIZ_TITLE).click()
        expect(student).to_have_url(re.compile(r"/quizzes/attempts/\d+/$"))
        attempt = int(re.search(r"/attempts/(\d+)/$", student.url).group(1))
        questions = json.loads(in_web(stack.run, (
            "import json; from quizzes.models import QuizAttempt; print(json.dumps([(i.position, i.snapshot) "
            f"for i in QuizAttempt.objects.get(pk={attempt}).items.all()]))")))
        for position, question in questions:  # each answered right, as its key says
            form = student.locator(f"#q{position}")
            fill_answer(form, question)
            expect(form.locator(".save-state")).to_contain_text("Saved")
        student.get_by_role("button", name="Hand in").click()
        expect(student.locator("#score")).to_have_attribute("data-status", "finished")
        expect(student.locator("#score-value")).to_have_text(str(len(questions)))

        student.goto(f"{stack.site}/courses/")
        student.get_by_role("link", name="Graphs 101").click()
        student.get_by_role("link", name=EXERCISE_TITLE).click()
        write_code(student, SOLUTION)
        student.get_by_role("button", name="Submit", exact=True).click()
        expect(student.locator("#verdict")).to_have_attribute("data-kind", "ACCEPTED", timeout=300_000)

        teacher.get_by_role("link", name="Gradebook").click()
        row = teacher.locator("table.gradebook tbody tr", has_text="noor")
        expect(row.locator("td")).to_have_text(["10 (1)", "10 (1)", "20"])  # quiz, exercise, total
        assert not teacher_errors and not student_errors, teacher_errors + student_errors
    finally:
        teacher.context.close()
        student.context.close()


def user_create(run, username: str, role: str) -> str:
    """A new account on the stack, made in the web container; its password."""
    password = f"a-long-password-{username}-1"
    in_web(run, "from accounts.models import User; from accounts.services import user_set_role; "
                f"user_set_role(User.objects.create_user({username!r}, password={password!r}), {role!r})")
    return password


def in_web(run, code: str) -> str:
    """What ``code`` printed, run by `manage.py shell` in the web container (the stack's own settings)."""
    done = run("exec", "-T", "web", "python", "manage.py", "shell", "-c", code)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""


def browser_page(chromium) -> tuple[Page, list[str]]:
    """A page of its own browser context (English, UTC) and the script errors it will collect."""
    # ignore_https_errors: the proxy's certificate is the test's own
    context = chromium.new_context(locale="en-US", timezone_id="UTC", ignore_https_errors=True)
    context.set_default_timeout(30_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    return page, errors


def student_client(stack: Stack, username: str) -> Client:
    """A new student, logged in through the TLS proxy."""
    password = user_create(stack.run, username, "student")
    client = Client(stack.site, tls=stack.tls)
    client.log_in(username, password)
    return client


def submit(client: Client, code: str = SOLUTION) -> str:
    """The submission's page, after the exercise page's form was posted."""
    status, headers, page = client.post_form(f"/submissions/new/{EXERCISE}/", {"code": code},
                                             form_page=f"/exercises/{EXERCISE}/")
    assert status == 302, (status, page[:500])
    return headers["Location"]


def status_fragment(client: Client, detail: str) -> str:
    status, _, fragment = client.get(detail.rstrip("/") + "/status/")
    assert status == 200, (status, fragment[:2000])
    return fragment


def verdict(client: Client, detail: str, timeout: float) -> str:
    """The status fragment once the submission has a stored outcome."""
    return wait_for(lambda: next((f for f in [status_fragment(client, detail)]
                                  if 'data-status="graded"' in f or 'data-status="failed"' in f), None),
                    timeout, f"a verdict for {detail}", interval=2)


def submission_id(detail: str) -> int:
    return int(re.search(r"/(\d+)/?$", detail).group(1))


def submissions_of(run, username: str) -> list[int]:
    listed = run("exec", "-T", "web", "python", "manage.py", "shell", "-c",
                 "import json; from grading.models import Submission; print(json.dumps(sorted("
                 f"Submission.objects.filter(user__username={username!r}).values_list('id', flat=True))))")
    assert listed.returncode == 0, listed.stderr
    return json.loads(listed.stdout.strip().splitlines()[-1])


def stored_verdicts(run) -> Counter:
    """How many times each submission's verdict was stored, from the grading workers' logs."""
    logs = run("logs", "--no-color", "worker")
    return Counter(int(n) for n in re.findall(r"submission (\d+): stored (?:graded|failed)", logs.stdout + logs.stderr))


def in_flight(client: Client, details: list[str]) -> None:
    wait_for(lambda: any('data-status="running"' in status_fragment(client, d) for d in details), 300,
             "a grading in flight", interval=1)


def assert_graded_once(run, client: Client, username: str, details: list[str]) -> None:
    """Every submission posted was kept (none lost, none doubled) and graded ACCEPTED exactly once."""
    fragments = [verdict(client, detail, timeout=600) for detail in details]
    assert all('data-verdict="ACCEPTED"' in f for f in fragments), fragments
    ids = [submission_id(detail) for detail in details]
    assert submissions_of(run, username) == sorted(ids)
    stored = stored_verdicts(run)
    assert all(stored[i] == 1 for i in ids), f"verdicts stored per submission: {dict(stored)}"


def answers(client: Client, path: str) -> bool:
    try:
        return client.get(path)[0] == 200
    except OSError:
        return False


def container_state(run, service: str) -> tuple[str, int, int]:
    """The service's container: its id, its first process's pid on this host, its restarts."""
    container = run("ps", "-q", service).stdout.strip()
    inspected = subprocess.run(["docker", "inspect", "-f", "{{.State.Pid}} {{.RestartCount}}", container],
                               capture_output=True, text=True, timeout=30)
    pid, restarts = inspected.stdout.split()
    return container, int(pid), int(restarts)


def test_kill_9_of_gunicorn_while_submissions_are_in_flight(stack):
    """gunicorn's master is the web container's first process: kill -9 of it takes its workers
    with it, Docker starts the container again (restart: unless-stopped), the site answers,
    the student is still logged in (sessions are in the database) and nothing was lost."""
    run = stack.run
    wait_healthy(stack.web)
    client = student_client(stack, "kim")
    details = [submit(client) for _ in range(3)]
    in_flight(client, details)
    container, pid, restarts = container_state(run, "web")
    os.kill(pid, signal.SIGKILL)
    killed = time.monotonic()
    wait_for(lambda: container_state(run, "web")[2] > restarts, 120, "Docker to start the web container again")
    wait_healthy(stack.web)
    # and through the proxy, which finds the container again wherever it came back
    wait_for(lambda: answers(client, "/healthz/"), 60, "the site through the TLS proxy")
    back_s = time.monotonic() - killed
    assert container_state(run, "web")[0] == container
    assert_graded_once(run, client, "kim", details)
    report("kill -9 of gunicorn (compose), default configuration", submissions=len(details), site_back_s=back_s,
           all_graded_s=time.monotonic() - killed)


def test_a_postgresql_restart_while_submissions_are_in_flight(stack):
    """A real restart of the stack's PostgreSQL (stopped with SIGINT, its fast shutdown, then
    started): the worker's and gunicorn's connections die with it. Gradings go on, and the site's
    first pages after it answer, not a 500 per gunicorn worker for a dead pooled connection."""
    run = stack.run
    wait_healthy(stack.web)
    client = student_client(stack, "pat")
    details = [submit(client) for _ in range(3)]
    in_flight(client, details)
    began = time.monotonic()
    restarted = run("restart", "-t", "30", "postgres")
    assert restarted.returncode == 0, restarted.stdout + restarted.stderr
    wait_for(lambda: run("exec", "-T", "postgres", "pg_isready", "-U", "graphdojo", "-h", "127.0.0.1").returncode == 0,
             120, "PostgreSQL to accept connections again")
    database_s = time.monotonic() - began
    for _ in range(6):  # more than gunicorn's two workers, each with a connection from before
        status, _, page = client.get(details[0])
        assert status == 200, (status, page[:2000])
    assert_graded_once(run, client, "pat", details)
    report("PostgreSQL restart (compose), default configuration", submissions=len(details),
           database_back_s=database_s, all_graded_s=time.monotonic() - began)
