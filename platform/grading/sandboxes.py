"""The sandbox the settings name, reached through grader (the platform never imports sandbox)."""
from __future__ import annotations

import functools

from django.conf import settings

from grader.host import Sandbox, get_sandbox


def grading_sandbox() -> Sandbox:
    """The sandbox workers grade in; one per worker process, so a warm pool outlives tasks."""
    return _sandbox_for(
        settings.SANDBOX_BACKEND,
        settings.SANDBOX_IMAGE,
        settings.SANDBOX_RUNTIME,
        settings.SANDBOX_POOL_SIZE,
        settings.SANDBOX_ALLOW_UNISOLATED,
    )


@functools.cache
def _sandbox_for(backend: str, image: str, runtime: str, pool_size: int, allow_unisolated: bool) -> Sandbox:
    return sandbox_new(backend, pool_size=pool_size, image=image, runtime=runtime, allow_unisolated=allow_unisolated)


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
    return get_sandbox(
        backend or settings.SANDBOX_BACKEND,
        image=image or settings.SANDBOX_IMAGE,
        runtime=runtime or settings.SANDBOX_RUNTIME,
        pool_size=settings.SANDBOX_POOL_SIZE if pool_size is None else pool_size,
        allow_unisolated=settings.SANDBOX_ALLOW_UNISOLATED if allow_unisolated is None else allow_unisolated,
    )
