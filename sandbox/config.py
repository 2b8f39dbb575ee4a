"""Each backend's configuration, typed, and read from keywords that must all mean something.

``sandbox_config("docker", pool_size=2)`` is a ``DockerConfig``; an option the backend does
not take (a misspelt setting, or another backend's option) raises ``SandboxConfigError``
naming it and the options there are, so a mistake fails where the sandbox is configured,
at start-up, instead of being quietly ignored. Nothing here touches an engine or a binary:
a configuration can be checked before any sandbox is made.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from sandbox.base import Limits

DEFAULT_IMAGE = "graphdojo-sandbox:latest"
DOCKER_RUNTIMES = ("runc", "runsc")  # runsc: gVisor


class SandboxConfigError(ValueError):
    """A sandbox configured with an option or a value that no backend takes."""


@dataclasses.dataclass(frozen=True)
class DockerConfig:
    image: str = DEFAULT_IMAGE
    runtime: str = "runc"  # one of DOCKER_RUNTIMES
    pool_size: int = 0  # warm containers per container shape; 0: none
    pool_limits: Limits | None = None  # the container shape to warm first (Limits() when None)
    preload: tuple[str, ...] = ("numpy", "torch")  # modules the pool imports ahead
    docker_base_url: str | None = None  # the engine's address; the environment's when None
    labels: Mapping[str, str] = dataclasses.field(default_factory=dict)  # extra container labels
    cgroup_parent: str | None = None  # the cgroup every container goes under

    def __post_init__(self) -> None:
        if self.runtime not in DOCKER_RUNTIMES:
            raise SandboxConfigError(f'runtime must be "runc" or "runsc" (gVisor), got {self.runtime!r}')
        if type(self.pool_size) is not int or self.pool_size < 0:
            raise SandboxConfigError(f"pool_size must be a whole number, 0 or more, got {self.pool_size!r}")
        object.__setattr__(self, "preload", tuple(self.preload))
        object.__setattr__(self, "labels", dict(self.labels))


@dataclasses.dataclass(frozen=True)
class LocalConfig:
    allow_unisolated: bool = False  # without bwrap, run with rlimits only: development only
    bwrap: str | None = None  # bubblewrap's path; found on PATH when None

    def __post_init__(self) -> None:
        if type(self.allow_unisolated) is not bool:  # "false" from a text setting would read as True
            raise SandboxConfigError(f"allow_unisolated must be True or False, got {self.allow_unisolated!r}")


@dataclasses.dataclass(frozen=True)
class AutoConfig:
    """Docker when an engine answers and holds the image, else local: each with its own options."""

    docker: DockerConfig = dataclasses.field(default_factory=DockerConfig)
    local: LocalConfig = dataclasses.field(default_factory=LocalConfig)

    def narrowed(self, name: str) -> SandboxConfig:
        """The configuration of backend ``name``: this one for "auto", else that backend's own
        (for a caller that holds every backend's options, such as settings)."""
        if name == "auto":
            return self
        if name == "docker":
            return self.docker
        if name == "local":
            return self.local
        raise _unknown_backend(name)


SandboxConfig = DockerConfig | LocalConfig | AutoConfig
BACKENDS: dict[str, type[DockerConfig] | type[LocalConfig]] = {"docker": DockerConfig, "local": LocalConfig}


def options_of(backend: type[DockerConfig] | type[LocalConfig]) -> list[str]:
    return [field.name for field in dataclasses.fields(backend)]


def sandbox_config(name: str, **options: Any) -> SandboxConfig:
    """The configuration of backend ``name`` ("docker", "local" or "auto") from keywords.

    SandboxConfigError for an unknown backend, an option that backend does not take ("auto"
    takes every backend's, each going to its own) or a value out of range.
    """
    if name == "auto":
        for option in sorted(options):
            if not any(option in options_of(kind) for kind in BACKENDS.values()):
                every = "; ".join(f"{backend}: {', '.join(options_of(kind))}" for backend, kind in BACKENDS.items())
                raise SandboxConfigError(f"no sandbox backend has an option {option!r} (the options are {every})")
        return AutoConfig(docker=DockerConfig(**_own(DockerConfig, options)),
                          local=LocalConfig(**_own(LocalConfig, options)))
    if name not in BACKENDS:
        raise _unknown_backend(name)
    kind = BACKENDS[name]
    for option in sorted(options):
        if option not in options_of(kind):
            raise SandboxConfigError(
                f"the {name} sandbox has no option {option!r} (its options are {', '.join(options_of(kind))})")
    return kind(**options)


def _own(kind: type[DockerConfig] | type[LocalConfig], options: Mapping[str, Any]) -> dict[str, Any]:
    return {option: value for option, value in options.items() if option in options_of(kind)}


def _unknown_backend(name: str) -> SandboxConfigError:
    return SandboxConfigError(f'unknown sandbox backend {name!r}: use "local", "docker" or "auto"')
