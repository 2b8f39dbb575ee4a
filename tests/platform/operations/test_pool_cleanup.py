"""A worker's warm pool lives as long as the worker (issue 24, item 6): a worker that stops
removes its pooled containers, and one that starts removes those a killed worker left.
Real Celery workers, the real Docker engine."""
from __future__ import annotations

import socket

import pytest

from testbed.processes import docker_is_up, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.docker]
OWNER_LABEL = "graphdojo.owner"  # sandbox.docker's; the platform's tests name it, not import it


def containers_of(pids: set[int]) -> list[str]:
    """Sandbox containers started by any of ``pids`` on this host."""
    import docker

    client = docker.from_env()
    try:
        found = []
        for container in client.containers.list(all=True, filters={"label": OWNER_LABEL}):
            host, _, rest = container.labels[OWNER_LABEL].partition("/")
            if host == socket.gethostname() and int(rest.partition("/")[0]) in pids:
                found.append(container.id)
        return found
    finally:
        client.close()


def warm_worker(site, student, name: str):
    """A Docker worker with a warm pool of one, after one grading (the pool starts with the first)."""
    worker = site.worker(name, SANDBOX_BACKEND="docker", SANDBOX_POOL_SIZE="1")
    ids = [site.submit(student).id]
    site.wait_all_finished(ids, timeout=180)
    pids = {worker.process.pid, *worker.pool_children()}
    wait_for(lambda: containers_of(pids), 60, f"worker {name}'s warm pool to start a container")
    return worker, pids


def test_a_stopping_worker_removes_its_pooled_containers(grading_site, student, requires):
    requires("Docker engine", docker_is_up(), "bash sandbox/image/ci-setup.sh")
    worker, pids = warm_worker(grading_site, student, "stopping")
    worker.stop()  # SIGTERM: Celery's warm shutdown
    assert containers_of(pids) == []


def test_a_starting_worker_removes_what_a_killed_one_left(grading_site, student, requires):
    requires("Docker engine", docker_is_up(), "bash sandbox/image/ci-setup.sh")
    killed, pids = warm_worker(grading_site, student, "killed")
    killed.kill_all()  # kill -9: no shutdown handler runs
    assert containers_of(pids), "a killed worker's pooled containers outlive it until someone removes them"
    grading_site.worker("next", SANDBOX_BACKEND="docker", SANDBOX_POOL_SIZE="1")
    assert containers_of(pids) == []
