"""The host's half of the bootstrap protocol (see bootstrap.py): jobs out, reports in.

The bytes on the wire are framed by framing.py, which both halves use. Everything that
comes back from a sandbox is read with a byte budget and parsed defensively: a hostile
program may have written anything on the way.
"""
from __future__ import annotations

import io
import signal as signals
import tarfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from sandbox.base import Limits, Outcome, Status
from sandbox.framing import (
    CHECKPOINTS_MAX_BYTES,
    OUTPUT_DIR,
    READY,
    REPORT_HEADER_MAX,
    Job,
    JobLimits,
    pack_job,
    split_checkpoints,
    split_report,
)

# The one script every sandbox runs (python -I -c): the runtime's modules installed under
# their own names (sandbox.framing, sandbox.zygote) in a bare package, dependencies first,
# then bootstrap.py, which imports them, as does the judge it forks. Nothing else of this
# package travels: the rest of it is the host's. Read once: a worker keeps speaking the
# protocol it was started with.
HERE = Path(__file__).parent
RUNTIME_MODULES = ("framing", "zygote")
_MODULE = """\
_module = _types.ModuleType("sandbox.{name}")
_module.__file__ = "sandbox/{name}.py"
_sys.modules["sandbox.{name}"] = _module
exec(compile({source!r}, "sandbox/{name}.py", "exec"), _module.__dict__)
"""
BOOTSTRAP_SOURCE = (
    "import sys as _sys, types as _types\n"
    '_package = _types.ModuleType("sandbox")\n_package.__path__ = []\n_sys.modules["sandbox"] = _package\n'
    + "".join(_MODULE.format(name=name, source=(HERE / f"{name}.py").read_text()) for name in RUNTIME_MODULES)
    + "del _sys, _types, _package, _module\n"
    + (HERE / "bootstrap.py").read_text()
)
SIGXCPU = int(signals.SIGXCPU)
# Wall clock granted beyond limits.wall_s before the host kills the sandbox itself: the
# bootstrap normally stops the program first and reports it.
HOST_GRACE_S = 5.0


def encode_job(
    files: Mapping[str, bytes],
    argv: Sequence[str],
    limits: Limits,
    env: Mapping[str, str],
    workdir: str,
    extra_limits: JobLimits | None = None,
    trusted: bool = False,
    secret: bytes | None = None,
) -> bytes:
    job_limits: JobLimits = {
        "cpu_s": limits.cpu_s,
        "wall_s": limits.wall_s,
        "output_bytes": limits.output_bytes,
        "files_bytes": limits.files_bytes,
        "file_bytes": limits.tmpfs_mb * 1024 * 1024,
        **(extra_limits or {}),
    }
    job: Job = {"argv": list(argv), "env": dict(env), "workdir": workdir, "limits": job_limits, "trusted": trusted}
    if trusted:
        job["secret"] = (secret or b"").hex()
    return pack_job(job, tar_of(files))


def tar_of(files: Mapping[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:") as archive:
        for name, data in sorted(files.items()):
            entry = tarfile.TarInfo(name.lstrip("/"))
            entry.size, entry.mode = len(data), 0o600
            archive.addfile(entry, io.BytesIO(data))
    return buffer.getvalue()


def report_budget(limits: Limits, *, trusted: bool = False) -> int:
    """The most bytes an honest bootstrap report can take (with a trusted program's checkpoints
    before it); more is a protocol error."""
    checkpoints = CHECKPOINTS_MAX_BYTES if trusted else 0
    return REPORT_HEADER_MAX + 2 * limits.output_bytes + 2 * limits.files_bytes + checkpoints + 1024 * 1024


def split_stream(stdout: bytes) -> tuple[bytes | None, bytes]:
    """What a sandbox wrote on its stdout, as (its last checkpoint, its report)."""
    return split_checkpoints(stdout[len(READY):] if stdout.startswith(READY) else stdout)


def files_from_tar(tar_bytes: bytes, cap: int) -> tuple[dict[str, bytes], bool]:
    """Regular files from the output tar, at most ``cap`` bytes; links and odd names dropped."""
    files: dict[str, bytes] = {}
    used, truncated = 0, False
    if not tar_bytes:
        return files, False
    try:
        with tarfile.open(fileobj=io.BytesIO(tar_bytes), mode="r:") as archive:
            for member in archive:
                parts = member.name.split("/")
                if not member.isfile() or member.name.startswith("/") or ".." in parts:
                    continue
                if used + member.size > cap:
                    truncated = True
                    continue
                content = archive.extractfile(member)
                if content is None:
                    continue
                files[f"{OUTPUT_DIR}/{member.name}"] = content.read()
                used += member.size
    except tarfile.TarError:
        truncated = True
    return files, truncated


def outcome_from_report(
    data: bytes,
    limits: Limits,
    backend: str,
    *,
    oom_seen: bool = False,
    peak_bytes: int = 0,
    memory_by_rlimit: bool = False,
    notes: Sequence[str] = (),
    checkpoint: bytes | None = None,
) -> Outcome:
    """Decide the status from a bootstrap report plus what the host knows of the memory cgroup."""
    report, stdout, stderr, tar_bytes = split_report(data)
    files, files_cut = files_from_tar(tar_bytes, limits.files_bytes)
    files_truncated = bool(report.get("files_truncated")) or files_cut
    signal = report.get("signal")
    peak = max(int(report.get("max_rss_bytes") or 0), peak_bytes)
    killed_by_oom = oom_seen or int(report.get("oom_kills") or 0) > 0
    if not killed_by_oom and signal == 9 and peak >= 0.9 * limits.memory_mb * 1024 * 1024:
        killed_by_oom = True  # the engine's OOM flag is not always set; the peak tells
    if not killed_by_oom and memory_by_rlimit and b"MemoryError" in stderr[-4096:]:
        killed_by_oom = True  # no memory cgroup: an RLIMIT_AS allocation failure
    stopped_by = report.get("stopped_by")
    status: Status
    if stopped_by in ("cpu", "wall") or signal == SIGXCPU:  # SIGXCPU: RLIMIT_CPU, the per-process backstop
        status = "timeout"
    elif killed_by_oom:
        status = "memory"
    elif stopped_by == "output_limit" or report.get("stdout_truncated") or report.get("stderr_truncated"):
        status = "output_limit"
    elif signal is not None:
        status = "signal"
    elif files_truncated:
        status = "output_limit"
    else:
        status = "ok"
    return Outcome(
        status=status,
        exit_code=report.get("exit_code"),
        signal=signal,
        stdout=stdout,
        stderr=stderr,
        stdout_truncated=bool(report.get("stdout_truncated")),
        stderr_truncated=bool(report.get("stderr_truncated")),
        files=files,
        files_truncated=files_truncated,
        wall_s=float(report.get("wall_s") or 0.0),
        cpu_s=float(report.get("cpu_s") or 0.0),
        max_rss_bytes=peak,
        backend=backend,
        notes=[*notes, *[str(n) for n in report.get("notes") or []][:20]],
        checkpoint=checkpoint,
    )


def failed_outcome(
    status: Status, backend: str, wall_s: float, notes: Sequence[str], ending: str, checkpoint: bytes | None = None
) -> Outcome:
    """An outcome for a sandbox that gave no report (killed by the host, or broken): ``notes``
    are the run's own, ``ending`` how it ended."""
    return Outcome(
        status=status, exit_code=None, signal=None, stdout=b"", stderr=b"",
        stdout_truncated=False, stderr_truncated=False, files={}, files_truncated=False,
        wall_s=wall_s, cpu_s=0.0, max_rss_bytes=0, backend=backend, notes=[*notes, ending],
        checkpoint=checkpoint, ending=ending,
    )
