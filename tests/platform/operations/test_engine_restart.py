"""A real restart of the Docker engine while submissions are graded in it, in the configuration
production runs (nothing shortened). The engine is a dockerd of the test's own, so that its
restart stops no one else's containers; it stops the sandboxes of the gradings in flight as
any engine restart does. Every submission is graded exactly once; the line starting FAULT says
how long it took (bench/results/recovery.md)."""
from __future__ import annotations

import os
import shutil
import subprocess
import time

import pytest

from testbed.processes import DockerEngine, docker_is_up, wait_for
from tests.platform.operations.conftest import report, slow_solution

pytestmark = [pytest.mark.slow, pytest.mark.docker]
IMAGE = "graphdojo-sandbox:latest"


@pytest.fixture
def engine(requires):
    requires("Docker engine", docker_is_up(), "bash sandbox/image/ci-setup.sh")
    requires("dockerd and iproute2 as root",
             os.geteuid() == 0 and shutil.which("dockerd") is not None and shutil.which("ip") is not None,
             "run as root where docker.io and iproute2 are installed")
    requires("the sandbox image", subprocess.run(["docker", "image", "inspect", IMAGE],
                                                 capture_output=True).returncode == 0, "make image")
    engine = DockerEngine()
    try:
        engine.start()
        engine.copy_image(IMAGE)
        yield engine
    finally:
        engine.close()


def sandboxes_running(engine: DockerEngine) -> bool:
    listed = subprocess.run(["docker", "-H", engine.url, "ps", "-q"], capture_output=True, text=True, timeout=30)
    return bool(listed.stdout.split())


def test_docker_engine_restart(own_default_grading_site, engine, student):
    from grading.models import Submission

    site = own_default_grading_site
    assert "GRADING_LEASE_S" not in site.env and "GRADING_RETRY_BACKOFF_S" not in site.env
    site.worker("only", beat=True, SANDBOX_BACKEND="docker", SANDBOX_IMAGE=IMAGE, DOCKER_HOST=engine.url)
    ids = [site.submit(student, code=slow_solution(3)).id for _ in range(3)]
    # A warm pool's container runs before any grading does: wait for a claimed grading too, so
    # that the restart lands on a grading in flight, however busy the machine.
    running = Submission.objects.filter(id__in=ids, status=Submission.Status.RUNNING)
    wait_for(lambda: running.exists() and sandboxes_running(engine), 120, "a grading's sandbox running in the engine")
    began = time.monotonic()
    engine.restart()  # SIGTERM: dockerd stops its containers, then comes back empty of them
    engine_s = time.monotonic() - began
    site.wait_all_finished(ids, timeout=600)
    recovered_s = time.monotonic() - began
    site.assert_graded_once(ids)
    attempts = dict(Submission.objects.filter(id__in=ids).values_list("id", "attempts"))
    assert max(attempts.values()) >= 2, f"no grading was stopped by the restart: {attempts}"
    report("Docker engine restart, default configuration", submissions=len(ids), engine_back_s=engine_s,
           all_graded_s=recovered_s, attempts=sorted(attempts.values()))
