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
        # sparse: the list's own answer, without one inspect per container, which fails with
        # 404 for a container removed meanwhile (other sandboxes on this engine come and go).
        for container in client.containers.list(all=True, sparse=True, filters={"label": OWNER_LABEL}):
            host, _, rest = container.attrs["Labels"][OWNER_LABEL].partition("/")
            if host == socket.gethostname() and int(rest.partition("/")[0]) in pids:
                found.append(container.id)
        return found
    finally:
        client.close()


def docker_worker(site, name: str):
    return site.worker(name, SANDBOX_BACKEND="docker", SANDBOX_POOL_SIZE="1")


def warm_up(site, student, worker) -> set[int]:
    """The worker's processes, once one grading started its warm pool of one (the pool starts
    with the first) and the pool holds a container."""
    ids = [site.submit(student).id]
    site.wait_all_finished(ids, timeout=180)
    pids = {worker.process.pid, *worker.pool_children()}
    wait_for(lambda: containers_of(pids), 60, f"worker {worker.name}'s warm pool to start a container")
    return pids


def test_a_starting_worker_removes_what_a_killed_one_left_and_a_stopping_one_its_own(grading_site, student,
                                                                                    requires):
    """Both ends of a pool's life on one site (each worker's start and first grading is most of
    what this costs): kill -9 leaves containers that the next worker's start removes; that
    worker, warm in turn, removes its own when it stops."""
    requires("Docker engine", docker_is_up(), "bash sandbox/image/ci-setup.sh")
    killed = docker_worker(grading_site, "killed")
    killed_pids = warm_up(grading_site, student, killed)
    killed.kill_all()  # kill -9: no shutdown handler runs
    assert containers_of(killed_pids), "a killed worker's pooled containers outlive it until someone removes them"
    stopping = docker_worker(grading_site, "next")
    assert containers_of(killed_pids) == [], "the next worker's start left the killed one's containers"
    stopping_pids = warm_up(grading_site, student, stopping)
    stopping.stop()  # SIGTERM: Celery's warm shutdown
    assert containers_of(stopping_pids) == [], "a stopping worker left its pooled containers"
