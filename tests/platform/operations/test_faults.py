"""Faults injected while submissions are in flight, with shortened times (a site of their own
each). Each ends with every submission graded exactly once (one stored verdict, from the
workers' logs) and prints how long recovery took (lines starting FAULT; run with -s to see them).

kill -9 of the pool child and of the whole worker, the broker restart and the PostgreSQL cut
are in test_faults_default.py, in the configuration production runs: the same scenarios and
assertions with the real times, so they are not run here a second time with shortened ones."""
from __future__ import annotations

import time

import pytest

from testbed.processes import Proxy, docker_is_up, wait_for
from tests.platform.operations.conftest import report, slow_solution

pytestmark = [pytest.mark.slow]


def running(site, ids) -> bool:
    return "running" in site.statuses(ids).values()


def test_cold_shutdown(grading_site, student):
    site = grading_site
    first = site.worker("first")
    ids = [site.submit(student, code=slow_solution(3)).id for _ in range(3)]
    wait_for(lambda: running(site, ids), 60, "a grading in flight")
    first.cold_shutdown()
    stopped = time.monotonic()
    site.worker("second", beat=True)
    site.wait_all_finished(ids, timeout=120)
    site.assert_graded_once(ids)
    report("cold shutdown", submissions=len(ids), recovered_s=time.monotonic() - stopped)


@pytest.mark.docker
def test_docker_engine_outage(grading_site, student, requires):
    requires("Docker engine", docker_is_up(), "bash sandbox/image/ci-setup.sh")
    site = grading_site
    engine = Proxy("/var/run/docker.sock", listen=str(site.tmp / "docker.sock"))
    try:
        site.worker("only", beat=True, SANDBOX_BACKEND="docker", DOCKER_HOST=f"unix://{engine.listen}")
        ids = [site.submit(student, code=slow_solution(1)).id for _ in range(4)]
        wait_for(lambda: running(site, ids), 90, "a grading in flight")
        engine.cut()
        cut = time.monotonic()
        time.sleep(15)
        engine.restore()
        site.wait_all_finished(ids, timeout=180)
        site.assert_graded_once(ids)
        report("Docker engine unreachable for 15 s", submissions=len(ids), recovered_s=time.monotonic() - cut - 15)
    finally:
        engine.close()
