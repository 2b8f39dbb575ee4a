"""The sandbox the settings name, reached through grader (the platform never imports sandbox)."""
from __future__ import annotations

import logging
import threading

from django.conf import settings

from grader.host import (
    AutoConfig,
    DockerConfig,
    LocalConfig,
    Sandbox,
    SandboxConfig,
    open_sandbox,
    remove_orphaned_containers,
)

log = logging.getLogger(__name__)
# One sandbox per worker process and configuration, so that a warm pool outlives tasks;
# closed (its pooled containers removed) when the worker process stops.
_sandboxes: dict[tuple[str, str, str, int, bool], Sandbox] = {}
_sandboxes_lock = threading.Lock()


def grading_sandbox() -> Sandbox:
    """The sandbox workers grade in; one per worker process, so a warm pool outlives tasks."""
    key = (settings.SANDBOX_BACKEND, settings.SANDBOX_IMAGE, settings.SANDBOX_RUNTIME, settings.SANDBOX_POOL_SIZE,
           settings.SANDBOX_ALLOW_UNISOLATED)
    with _sandboxes_lock:
        if key not in _sandboxes:
            backend, image, runtime, pool_size, allow_unisolated = key
            _sandboxes[key] = sandbox_new(backend, pool_size=pool_size, image=image, runtime=runtime,
                                          allow_unisolated=allow_unisolated)
        return _sandboxes[key]


def grading_sandboxes_close(**_signal: object) -> None:
    """Close this process's sandboxes: their warm pools stop and their containers are removed
    (Celery's worker_process_shutdown and worker_shutdown)."""
    with _sandboxes_lock:
        sandboxes = list(_sandboxes.values())
        _sandboxes.clear()
    for sandbox in sandboxes:
        try:
            sandbox.close()
        except Exception:  # a stopping worker must stop; the next one's start removes what is left
            log.warning("could not close the %s sandbox", sandbox.name, exc_info=True)


def orphaned_containers_remove(**_signal: object) -> int:
    """Remove the sandbox containers that dead workers of this host left (a starting worker
    calls it, Celery's worker_init): a killed worker's warm pool does not wait for its expiry."""
    if settings.SANDBOX_BACKEND == "local":
        return 0
    removed = remove_orphaned_containers()
    if removed:
        log.warning("removed %s sandbox containers that stopped workers left behind", removed)
    return removed


def sandbox_new(
    backend: str | None = None,
    *,
    pool_size: int | None = None,
    image: str | None = None,
    runtime: str | None = None,
    allow_unisolated: bool | None = None,
) -> Sandbox:
    """A sandbox of its own (the caller closes it), configured from settings unless told otherwise.

    Raises SandboxUnavailable when the backend cannot work on this host.
    """
    return open_sandbox(sandbox_configured(backend, pool_size=pool_size, image=image, runtime=runtime,
                                           allow_unisolated=allow_unisolated))


def sandbox_configured(
    backend: str | None = None,
    *,
    pool_size: int | None = None,
    image: str | None = None,
    runtime: str | None = None,
    allow_unisolated: bool | None = None,
) -> SandboxConfig:
    """The configuration the settings (or the caller) give ``backend``; SandboxConfigError for
    a backend or a value no sandbox takes. The settings hold every backend's options: the
    named backend takes its own."""
    every = AutoConfig(
        docker=DockerConfig(
            image=image or settings.SANDBOX_IMAGE,
            runtime=runtime or settings.SANDBOX_RUNTIME,
            pool_size=settings.SANDBOX_POOL_SIZE if pool_size is None else pool_size,
        ),
        local=LocalConfig(
            allow_unisolated=settings.SANDBOX_ALLOW_UNISOLATED if allow_unisolated is None else allow_unisolated,
        ),
    )
    return every.narrowed(backend or settings.SANDBOX_BACKEND)
