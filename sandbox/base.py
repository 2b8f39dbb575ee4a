"""The one interface every sandbox backend implements.

A sandbox runs an untrusted program with files in and files out, under limits, and
reports exactly what happened. It knows nothing of grading.

Inside every backend the program sees the same world:
- its working directory holds the files it was given (``files`` keys are relative paths);
- ``out/`` inside that directory is its output folder; what it leaves there comes back
  in ``Outcome.files`` (size-capped, links never followed);
- ``argv[0] == "python3"`` means the sandbox's Python 3.11 with numpy and torch.
"""
from __future__ import annotations

import abc
import dataclasses
from collections.abc import Mapping, Sequence
from typing import Literal

Status = Literal["ok", "timeout", "memory", "output_limit", "signal", "sandbox_error"]

# How busy the whole machine is: its CPUs, memory, processes, disks, power. Under runc and local
# these files are the host's, so one grading could watch another grading on the same host, and a
# grading that saw a hidden input could signal it to one whose output is shown (a covert channel:
# 199 busy jiffies a second read from /proc/stat on a 2-core host). Every backend but gVisor, which
# shows each sandbox its own counters, hides them: a file reads as empty, a folder as empty.
# (The sysinfo() call tells the same story; confined processes are refused it: zygote.py.)
HOST_COUNTERS_IN_PROC = (
    "stat", "loadavg", "uptime", "interrupts", "softirqs", "schedstat", "vmstat", "pressure",
    "diskstats", "meminfo", "zoneinfo", "buddyinfo", "pagetypeinfo", "swaps", "locks",
    "sys/fs/file-nr", "sys/fs/inode-nr", "sys/fs/inode-state", "sys/fs/dentry-state", "sys/fs/aio-nr",
)
# /sys: per-node memory, CPU frequency and idle-state time (per CPU), energy counters. The local
# backend shows no /sys at all.
HOST_COUNTERS_IN_SYS = (
    "devices/system/node", "devices/system/cpu/cpufreq", "devices/virtual/powercap", "devices/virtual/thermal",
)
HOST_COUNTERS_PER_CPU = ("cpuidle", "cpufreq")


class SandboxUnavailable(Exception):
    """The backend itself failed (engine down, image missing): an infrastructure fault to retry."""


@dataclasses.dataclass(frozen=True)
class Limits:
    cpu_s: float = 10.0          # CPU seconds, all processes together
    wall_s: float = 30.0         # wall clock, enforced from the host; larger than cpu_s
    memory_mb: int = 512         # memory, with swap equal to it
    pids: int = 64               # processes and threads
    output_bytes: int = 64 * 1024  # per stream (stdout, stderr)
    files_bytes: int = 4 * 1024 * 1024  # output folder, all files together
    tmpfs_mb: int = 64           # writable work folder and /tmp
    cpus: float = 1.0            # CPU share


@dataclasses.dataclass(frozen=True)
class RunOptions:
    # None: no GPU (and no NVIDIA device or variable is visible); an int: that many;
    # a tuple of strings: those device ids.
    gpus: int | tuple[str, ...] | None = None
    env: Mapping[str, str] = dataclasses.field(default_factory=dict)
    # Modules the sandbox imports before it takes the job (a warm pool's are already there).
    preload: tuple[str, ...] = ()
    # A trusted program (a judge) keeps root inside the sandbox, forks its workers from the
    # clean, preloaded zygote (sandbox/zygote.py) and confines them itself, and alone reads
    # ``secret`` (from descriptor SECRET_FD_ENV names, never an environment variable or a
    # file). Every other program runs as the lent uid with no capabilities. A trusted program
    # may also hand over checkpoints while it runs (CHECKPOINT_FD_ENV; ``Outcome.checkpoint``).
    trusted: bool = False
    secret: bytes | None = None


@dataclasses.dataclass
class Outcome:
    status: Status
    exit_code: int | None
    signal: int | None
    stdout: bytes
    stderr: bytes
    stdout_truncated: bool
    stderr_truncated: bool
    files: dict[str, bytes]
    files_truncated: bool
    wall_s: float
    cpu_s: float
    max_rss_bytes: int
    backend: str
    notes: list[str] = dataclasses.field(default_factory=list)
    # The last checkpoint the trusted program handed over (framing.hand_checkpoint), which the
    # host received before the sandbox ended, however it ended; None when it handed none.
    checkpoint: bytes | None = None
    # How a sandbox that gave no report ended, as the host saw it (also the last of ``notes``);
    # "" when the bootstrap reported.
    ending: str = ""


class Sandbox(abc.ABC):
    """What every backend offers its callers; each backend states all of it."""

    name: str  # the backend as outcomes name it ("local", "docker-runc", "docker-runsc")

    @property
    @abc.abstractmethod
    def isolated(self) -> bool:
        """Whether programs run isolated (namespaces, no network, the lent uid...). False only
        in the local backend's unisolated development mode, where a program runs with
        rlimits alone: a trusted program must then start its children under its own uid."""

    @abc.abstractmethod
    def run(
        self,
        files: Mapping[str, bytes],
        argv: Sequence[str],
        limits: Limits,
        options: RunOptions | None = None,
    ) -> Outcome:
        """Run argv in a fresh sandbox holding ``files``; never raises for what the program did."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release what the backend holds between runs (a warm pool's containers); the
        sandbox is not used afterwards."""
