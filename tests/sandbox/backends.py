"""Real sandbox backends for tests: docker-runc, docker-runsc and local (bubblewrap).

A test that names the ``sandbox`` fixture runs on all three (tests/conftest.py registers this
module as a plugin). A backend that is missing skips here and fails in CI (see ``requires`` there).
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from sandbox import DEFAULT_IMAGE, Limits, RunOptions, Sandbox, SandboxUnavailable, docker_available, get_sandbox

BACKENDS = ["docker-runc", "docker-runsc", "local"]
# Small limits keep the hostile programs cheap on a 2-core machine.
SMALL = Limits(cpu_s=2.0, wall_s=4.0, memory_mb=256, pids=48, output_bytes=64 * 1024,
               files_bytes=1024 * 1024, tmpfs_mb=16, cpus=1.0)
HOW_DOCKER = "run sandbox/image/ci-setup.sh and `make image`"

_instances: dict[str, Sandbox] = {}
_runtimes_seen: set[str] = set()  # an engine found once is not asked again (a busy one answers slowly)


def docker_runtime_available(runtime: str) -> bool:
    if runtime in _runtimes_seen:
        return True
    if not docker_available(DEFAULT_IMAGE):
        return False
    import docker

    client = docker.from_env(timeout=60)
    try:
        found = runtime in (client.info().get("Runtimes") or {})
    finally:
        client.close()
    if found:
        _runtimes_seen.add(runtime)
    return found


def backend_sandbox(name: str, requires) -> Sandbox:
    """The shared sandbox for a backend name, or a skip (a failure in CI) when it is missing."""
    if name.startswith("docker-"):
        runtime = name.removeprefix("docker-")
        requires(f"Docker engine with the {runtime} runtime and the sandbox image",
                 docker_runtime_available(runtime), HOW_DOCKER)
    else:
        requires("bubblewrap", shutil.which("bwrap") is not None, "apt-get install bubblewrap")
    if name not in _instances:
        try:
            if name.startswith("docker-"):
                _instances[name] = get_sandbox("docker", runtime=name.removeprefix("docker-"))
            else:
                _instances[name] = get_sandbox("local")
        except SandboxUnavailable as error:
            requires(name, False, str(error))
    return _instances[name]


@pytest.fixture(params=BACKENDS)
def sandbox(request, requires) -> Sandbox:
    return backend_sandbox(request.param, requires)


def python(sandbox: Sandbox, code: str, limits: Limits = SMALL, files=None, options: RunOptions | None = None):
    """Run ``python3 -c code`` in the sandbox: an untrusted program, unless ``options`` say trusted."""
    return sandbox.run(files or {}, ["python3", "-c", code], limits, options)


INTERPRETER_UNDER_TMP = sorted(
    {Path(p).relative_to("/tmp").parts[0] for p in {sys.prefix, sys.base_prefix} if Path(p).is_relative_to("/tmp")}
)


def assert_next_run_is_clean(sandbox: Sandbox) -> None:
    """A fresh run after a hostile one works and finds nothing the hostile one left: not in its
    home, its folder or /tmp (which the trusted side alone may list)."""
    outcome = python(sandbox, "import os; print(sorted(os.listdir('/tmp')), os.listdir('.'), os.listdir('out'))",
                     options=RunOptions(trusted=True))
    assert (outcome.status, outcome.exit_code) == ("ok", 0), outcome
    # The local backend binds the worker's own Python read-only, which shows in /tmp when
    # the worker was installed there (a CI clone under /tmp, say); nothing else may.
    expected_tmp = INTERPRETER_UNDER_TMP if outcome.backend == "local" else []
    assert outcome.stdout == f"{expected_tmp} ['out'] []\n".encode(), outcome.stdout
    untrusted = python(sandbox, "import os; print(os.listdir(os.environ['HOME']), os.listdir('.'), os.listdir('out'))")
    assert untrusted.stdout == b"[] ['out'] []\n", untrusted
