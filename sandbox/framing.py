"""What the host and the programs inside a sandbox must spell alike, defined once (standard
library only): the bytes that cross between the host and a sandbox's bootstrap, and the names
both sides use (paths inside, environment variables, descriptors).

    bootstrap -> host   READY, once it can take a job
    host -> bootstrap   u32 length + JSON job, then u64 length + a tar of the files
    bootstrap -> host   u32 length + JSON report, then the stdout, stderr and tar bytes it sizes

The host (protocol.py, the backends, delegation.py, cgroups.py), the bootstrap
(bootstrap.py), the zygote (zygote.py) and the judge all import this module. Nothing of this
repository exists inside a sandbox, so the bootstrap gets this file as part of its one script
(``sandbox.protocol.BOOTSTRAP_SOURCE``), installed as ``sandbox.framing``.
"""
from __future__ import annotations

import json
import struct
from collections.abc import Callable
from typing import Any, NotRequired, TypedDict

# -- paths inside every sandbox --
WORKDIR = "/job"  # the program's working folder, holding the job's files
OUTPUT_DIR = "out"  # in the working folder: what the program leaves there comes back to the host
CHILD_CGROUP_DIR = "/sandbox-cgroup"  # where the lent cgroup is mounted, one folder per controller
# The lent cgroup's folders under CHILD_CGROUP_DIR: one per cgroup v1 controller, or one v2 folder.
FREEZER, PIDS = "freezer", "pids"
CPUACCT = "cpuacct"  # v1, where the host has it: the CPU every task inside used, ended ones included
UNIFIED = "unified"

# -- what the host lends a sandbox (delegation.py), as its program learns it --
CHILD_UID_ENV = "SANDBOX_CHILD_UID"  # the uid every untrusted process runs as, unique on the host
TRUSTED_UID_ENV = "SANDBOX_TRUSTED_UID"  # a second one, for trusted workers that need no root
CHILD_CGROUP_ENV = "SANDBOX_CHILD_CGROUP"  # CHILD_CGROUP_DIR, where a cgroup is lent
# Where the program reads the bytes of memory the whole sandbox holds (files in its tmpfs and
# memory no process maps included): a file holding the number (its memory cgroup's usage), or
# MEMINFO where /proc/meminfo is the sandbox's own (gVisor). Unset: /sys/fs/cgroup, if shown.
MEMORY_USAGE_ENV = "SANDBOX_MEMORY_USAGE"
MEMORY_USAGE_FILE = "/sandbox-memory/usage"  # where the local backend binds its cgroup's usage
MEMORY_STAT_FILE = "/sandbox-memory/stat"  # ...and its memory.stat (other backends: beside the usage file)
MEMINFO = "meminfo"

# -- what the bootstrap gives a trusted program (the judge) --
ZYGOTE_FD_ENV = "SANDBOX_ZYGOTE_FD"  # the judge's end of the zygote's socket
SECRET_FD_ENV = "SANDBOX_SECRET_FD"  # the descriptor the run's secret is read from (never a variable or a file)
ZYGOTE_FD, SECRET_FD = 3, 4  # ...and where they are
PRELOADED_ENV = "SANDBOX_PRELOADED"  # the modules imported before the job, comma-separated

# -- the bytes between host and bootstrap --
READY = b"GDREADY\n"
REPORT_HEADER_MAX = 64 * 1024
_U32 = struct.Struct(">I")
_U64 = struct.Struct(">Q")


class ProtocolError(Exception):
    """The sandbox did not answer in the bootstrap's format."""


class JobLimits(TypedDict, total=False):
    cpu_s: float  # all processes together
    wall_s: float
    output_bytes: int  # per stream
    files_bytes: int  # the output folder, all files together
    file_bytes: int  # any one file the program writes (RLIMIT_FSIZE)
    address_space_bytes: int  # only where no memory cgroup exists (RLIMIT_AS)
    nproc: int  # only where the pids cgroup does not bind (RLIMIT_NPROC)


class Job(TypedDict):
    argv: list[str]
    env: dict[str, str]
    workdir: str
    limits: JobLimits
    # A trusted program (the judge) keeps root, gets the zygote (zygote.py) for its workers
    # and ``secret`` (hex) on a private pipe; any other program runs confined to the lent uid.
    trusted: NotRequired[bool]
    secret: NotRequired[str]


class Report(TypedDict):
    exit_code: int | None
    signal: int | None
    stopped_by: str | None  # "cpu", "wall", "output_limit" or None
    wall_s: float
    cpu_s: float
    max_rss_bytes: int
    oom_kills: int
    stdout_truncated: bool
    stderr_truncated: bool
    files_truncated: bool
    notes: list[str]


def pack_job(job: Job, tar: bytes) -> bytes:
    header = json.dumps(job).encode()
    return _U32.pack(len(header)) + header + _U64.pack(len(tar)) + tar


def read_job(read_exact: Callable[[int], bytes]) -> tuple[Job, bytes]:
    """The job and its tar, from a reader that returns exactly the bytes asked for."""
    (header_len,) = _U32.unpack(read_exact(_U32.size))
    job: Job = json.loads(read_exact(header_len))
    (tar_len,) = _U64.unpack(read_exact(_U64.size))
    return job, read_exact(tar_len)


def pack_report(report: Report, stdout: bytes, stderr: bytes, files: bytes) -> bytes:
    sized = {**report, "stdout_len": len(stdout), "stderr_len": len(stderr), "files_len": len(files)}
    header = json.dumps(sized).encode()
    return _U32.pack(len(header)) + header + stdout + stderr + files


def split_report(data: bytes) -> tuple[dict[str, Any], bytes, bytes, bytes]:
    """Cut a report (the bytes after READY) into header, stdout, stderr and the files' tar.

    The header stays a plain dict: it comes from inside the sandbox, and its reader checks
    every field it uses.
    """
    if len(data) < _U32.size:
        raise ProtocolError("the sandbox ended without a report")
    (header_len,) = _U32.unpack(data[: _U32.size])
    if header_len > REPORT_HEADER_MAX or len(data) < _U32.size + header_len:
        raise ProtocolError("the sandbox's report header is cut or too large")
    try:
        report = json.loads(data[_U32.size : _U32.size + header_len])
        sizes = [int(report[k]) for k in ("stdout_len", "stderr_len", "files_len")]
    except (ValueError, KeyError, TypeError) as error:
        raise ProtocolError(f"unreadable report header: {error}") from None
    body = data[_U32.size + header_len :]
    if any(n < 0 for n in sizes) or sum(sizes) != len(body):
        raise ProtocolError("the sandbox's report body does not match its header")
    stdout = body[: sizes[0]]
    stderr = body[sizes[0] : sizes[0] + sizes[1]]
    return report, stdout, stderr, body[sizes[0] + sizes[1] :]
