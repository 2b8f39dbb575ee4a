"""Sandboxes: run an untrusted program with files in and out, under limits (see base.py).

    sandbox = get_sandbox("auto", pool_size=2)
    outcome = sandbox.run({"main.py": b"print(1)"}, ["python3", "main.py"], Limits(wall_s=5))
"""
from __future__ import annotations

from typing import Any

from sandbox.base import (
    OUTPUT_DIR,
    Limits,
    Outcome,
    RunOptions,
    Sandbox,
    SandboxUnavailable,
    Status,
)

DEFAULT_IMAGE = "graphdojo-sandbox:latest"

__all__ = [
    "DEFAULT_IMAGE",
    "OUTPUT_DIR",
    "Limits",
    "Outcome",
    "RunOptions",
    "Sandbox",
    "SandboxUnavailable",
    "Status",
    "docker_available",
    "get_sandbox",
    "remove_orphaned_containers",
]


def get_sandbox(name: str, **config: Any) -> Sandbox:
    """The backend called ``name``: "local" (bubblewrap), "docker", or "auto".

    "auto" is docker when an engine answers and the image exists, else local.
    Config keywords (all optional): image, runtime ("runc" | "runsc"), pool_size (0: no
    warm pool), allow_unisolated (local only, development), docker_base_url; and for
    docker pool_limits (the container shape to warm first), preload (modules the pool
    imports ahead, default numpy and torch), labels (extra container labels), cgroup_parent
    (the cgroup every container goes under, e.g. to account for them together).
    A backend that cannot work here raises SandboxUnavailable.
    """
    if name == "auto":
        name = "docker" if docker_available(config.get("image"), config.get("docker_base_url")) else "local"
    if name == "local":
        from sandbox.local import LocalSandbox

        return LocalSandbox(**config)
    if name == "docker":
        from sandbox.docker import DockerSandbox

        return DockerSandbox(**config)
    raise ValueError(f'unknown sandbox backend {name!r}: use "local", "docker" or "auto"')


def docker_available(image: object = None, base_url: object = None) -> bool:
    """Whether a Docker engine answers and holds the sandbox image."""
    try:
        import docker
        from docker.errors import DockerException
    except ImportError:
        return False
    try:
        client = docker.DockerClient(base_url=str(base_url), timeout=5) if base_url else docker.from_env(timeout=5)
        try:
            client.images.get(str(image or DEFAULT_IMAGE))
        finally:
            client.close()
    except (DockerException, OSError):
        return False
    return True


def remove_orphaned_containers(docker_base_url: str | None = None) -> int:
    """Remove the sandbox containers that dead processes of this host left (a worker that
    starts calls it); 0 where no Docker engine answers."""
    try:
        from sandbox.docker import remove_orphans
    except ImportError:  # no docker SDK: no containers either
        return 0
    return remove_orphans(docker_base_url)
