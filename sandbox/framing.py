"""What the host and the programs inside a sandbox must spell alike, defined once (standard
library only): the bytes that cross between the host and a sandbox's bootstrap, and the names
both sides use (paths inside, environment variables, descriptors).

    bootstrap -> host   READY, once it can take a job
    host -> bootstrap   u32 length + JSON job, then u64 length + a tar of the files
    bootstrap -> host   any number of CHECKPOINT_TAG + u32 length + bytes, while the program runs
    bootstrap -> host   u32 length + JSON report, then the stdout, stderr and tar bytes it sizes

A checkpoint is what a trusted program hands the host while it runs (``hand_checkpoint``),
passed on by the bootstrap at once: the host keeps the last one whatever becomes of the
sandbox afterwards, even when it dies with no report (the judge: the result it has if it dies
from then on). A report's first byte is 0 (its header is under 64 KiB), a checkpoint's is not.

The host (protocol.py, the backends, delegation.py, cgroups.py), the bootstrap
(bootstrap.py), the zygote (zygote.py) and the judge all import this module. Nothing of this
repository exists inside a sandbox, so the bootstrap gets this file as part of its one script
(``sandbox.protocol.BOOTSTRAP_SOURCE``), installed as ``sandbox.framing``.
"""
from __future__ import annotations

import json
import socket
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
CHECKPOINT_FD_ENV = "SANDBOX_CHECKPOINT_FD"  # the trusted program's end of the checkpoint channel
ZYGOTE_FD, SECRET_FD, CHECKPOINT_FD = 3, 4, 5  # ...and where they are
PRELOADED_ENV = "SANDBOX_PRELOADED"  # the modules imported before the job, comma-separated

# -- the bytes between host and bootstrap --
READY = b"GDREADY\n"
REPORT_HEADER_MAX = 64 * 1024
_U32 = struct.Struct(">I")
_U64 = struct.Struct(">Q")
CHECKPOINT_TAG = b"GDCHECKPOINT"
CHECKPOINT_FRAME = len(CHECKPOINT_TAG) + _U32.size  # the bytes around each checkpoint on the host's stream
CHECKPOINT_MAX_BYTES = 2 << 20  # one checkpoint
# Every checkpoint of one run together, frames included: what the host reads is bounded however
# often a program hands one over. Past it the bootstrap refuses them.
CHECKPOINTS_MAX_BYTES = 8 << 20
CHECKPOINT_TAKEN, CHECKPOINT_REFUSED = b"\x01", b"\x00"  # the bootstrap's answer to the program


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


def pack_checkpoint(payload: bytes) -> bytes:
    """A checkpoint as the bootstrap passes it to the host."""
    return CHECKPOINT_TAG + _U32.pack(len(payload)) + payload


def split_checkpoints(data: bytes) -> tuple[bytes | None, bytes]:
    """The last whole checkpoint at the head of ``data`` (the bytes after READY), and what
    follows them: the report. A checkpoint cut off (the sandbox died while passing it on) is
    not one, and leaves no report."""
    last, at = None, 0
    while data.startswith(CHECKPOINT_TAG, at):
        start = at + CHECKPOINT_FRAME
        if len(data) < start:
            return last, b""
        (size,) = _U32.unpack(data[at + len(CHECKPOINT_TAG) : start])
        if size > CHECKPOINT_MAX_BYTES or len(data) < start + size:
            return last, b""
        last, at = data[start : start + size], start + size
    rest = data[at:]
    return (last, b"") if rest and CHECKPOINT_TAG.startswith(rest) else (last, rest)


def hand_checkpoint(fd: int, payload: bytes) -> bool:
    """The trusted program's side: hand ``payload`` to the bootstrap on the checkpoint channel
    (``CHECKPOINT_FD``) and wait until it has passed it on to the host. False when it was
    refused (too large, or past the run's budget) or the channel is gone."""
    channel = socket.socket(fileno=fd)
    try:
        # MSG_NOSIGNAL: a bootstrap that closed the channel (a refusal) is an answer, not a SIGPIPE.
        channel.sendall(_U32.pack(len(payload)) + payload, socket.MSG_NOSIGNAL)
        return channel.recv(1) == CHECKPOINT_TAKEN
    except OSError:
        return False
    finally:
        channel.detach()  # the descriptor stays the caller's


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
