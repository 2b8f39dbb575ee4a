"""Sandboxes: run an untrusted program with files in and out, under limits (see base.py).

    sandbox = get_sandbox("auto", pool_size=2)
    outcome = sandbox.run({"main.py": b"print(1)"}, ["python3", "main.py"], Limits(wall_s=5))
"""
from __future__ import annotations

from typing import Any

from sandbox.base import (
    Limits,
    Outcome,
    RunOptions,
    Sandbox,
    SandboxUnavailable,
    Status,
)
from sandbox.config import (
    DEFAULT_IMAGE,
    AutoConfig,
    DockerConfig,
    LocalConfig,
    SandboxConfig,
    SandboxConfigError,
    sandbox_config,
)
from sandbox.docker import DockerSandbox, docker_available, remove_orphans
from sandbox.framing import OUTPUT_DIR
from sandbox.local import LocalSandbox

__all__ = [
    "DEFAULT_IMAGE",
    "OUTPUT_DIR",
    "AutoConfig",
    "DockerConfig",
    "Limits",
    "LocalConfig",
    "Outcome",
    "RunOptions",
    "Sandbox",
    "SandboxConfig",
    "SandboxConfigError",
    "SandboxUnavailable",
    "Status",
    "docker_available",
    "get_sandbox",
    "open_sandbox",
    "remove_orphaned_containers",
    "sandbox_config",
]


def get_sandbox(name: str, **options: Any) -> Sandbox:
    """The backend called ``name``: "local" (bubblewrap), "docker", or "auto", configured
    by keywords (sandbox/config.py: ``DockerConfig`` and ``LocalConfig`` name them all).

    "auto" is docker when an engine answers and the image exists, else local; it takes both
    backends' options, each going to its own. SandboxConfigError for an option the backend
    does not take; SandboxUnavailable when the backend cannot work here.
    """
    return open_sandbox(sandbox_config(name, **options))


def open_sandbox(config: SandboxConfig) -> Sandbox:
    """The sandbox ``config`` describes (see get_sandbox)."""
    if isinstance(config, AutoConfig):
        docker_here = docker_available(config.docker.image, config.docker.docker_base_url)
        config = config.docker if docker_here else config.local
    if isinstance(config, LocalConfig):
        return LocalSandbox(config)
    return DockerSandbox(config)


def remove_orphaned_containers(docker_base_url: str | None = None) -> int:
    """Remove the sandbox containers that dead processes of this host left (a worker that
    starts calls it); 0 where no Docker engine answers."""
    return remove_orphans(docker_base_url)
