"""The bubblewrap backend: the embedded default where no container engine runs.

How the sandbox is built (found by trying bwrap 0.8 as real root; tests/sandbox and
tests/security/test_sandbox_*.py hold each finding to it):

- ``--unshare-all`` as root also makes a user namespace that maps only uid 0, so the
  in-sandbox judge could never ``setuid(65534)`` (EINVAL/EPERM) and bwrap maps at most one
  uid. So no user namespace: ``--unshare-ipc --unshare-pid --unshare-net --unshare-uts
  --unshare-cgroup-try`` with the real uid 0, as Docker does without userns-remap.
- ``--cap-drop ALL --cap-add CAP_SETUID --cap-add CAP_SETGID --cap-add CAP_KILL --cap-add
  CAP_CHOWN`` leaves exactly those four capabilities (CapEff 0xe1). CAP_KILL is kept
  because the judge, uid 0, must be able to SIGKILL its child running as the lent uid (a
  signal to another uid needs it); it reaches nothing outside the sandbox's own PID
  namespace. CAP_CHOWN gives each process family its own home (zygote.py ``make_home``).
  bwrap always sets no_new_privs, so neither exec as root nor a setuid binary can gain
  back a capability, and ``setuid(65534)`` drops all three. (The bounding set stays
  full; with no_new_privs nothing can be gained from it.) ``--cap-add`` together with
  ``--unshare-user`` keeps every capability of the namespace, not just those named.
- ``--as-pid-1`` makes our trusted bootstrap PID 1, which the program cannot signal.
- The root is bwrap's own tmpfs, remounted read-only; /usr (and the worker's Python, so
  ``python3`` has numpy and torch) are bound read-only; /tmp and the work folder are
  size-capped tmpfs; /proc is the namespace's own, /dev a minimal one, /sys absent.
  bwrap makes the folders above a bind 0700, so they are chmod-ed 0755 (or uid 65534
  could not reach the interpreter). bwrap leaves /proc/sys writable to uid 0 (its
  check runs after it dropped CAP_DAC_OVERRIDE), so we make it read-only ourselves.
  Files go in and out over the bootstrap's stdin/stdout, never through a host folder.
- A seccomp filter (zygote.py's, the one every untrusted process in any sandbox gets)
  denies what Docker's default profile denies and matters here: without it uid 0 inside
  read the host root's keyring id and made a user namespace.
- Memory (swap included) and processes are capped by a cgroup made per run; where none
  can be made, RLIMIT_AS and RLIMIT_NPROC stand in (weaker: NPROC does not bind uid 0)
  and the outcome says so. The host enforces the wall clock by SIGKILL of bwrap, whose
  ``--die-with-parent`` child is PID 1, taking the whole namespace with it.
"""
from __future__ import annotations

import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, cast

from sandbox.base import HOST_COUNTERS_IN_PROC, Limits, Outcome, RunOptions, Sandbox, SandboxUnavailable, Status
from sandbox.cgroups import RunCgroup, remove_stale
from sandbox.config import LocalConfig
from sandbox.delegation import Delegation
from sandbox.framing import (
    MEMORY_STAT_FILE,
    MEMORY_USAGE_ENV,
    MEMORY_USAGE_FILE,
    READY,
    WORKDIR,
    JobLimits,
    ProtocolError,
)
from sandbox.protocol import (
    BOOTSTRAP_SOURCE,
    HOST_GRACE_S,
    encode_job,
    failed_outcome,
    outcome_from_report,
    report_budget,
    split_stream,
)
from sandbox.zygote import filter_program, filter_supported

UNISOLATED_NOTE = "unisolated development mode: no isolation"
STARTUP_GRACE_S = 10.0
CAPABILITIES = ("CAP_SETUID", "CAP_SETGID", "CAP_KILL", "CAP_CHOWN")  # as docker.py's, and why
# Docker's lists: read-only, and hidden behind an empty file or folder.
PROC_READ_ONLY = ("sys", "sysrq-trigger", "fs", "irq", "bus")
PROC_MASKED = ("kcore", "keys", "latency_stats", "timer_list", "timer_stats", "sched_debug",
               "acpi", "asound", "scsi", "kmsg", "kpagecount", "kpageflags", "kpagecgroup")
ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "passwd", "group", "nsswitch.conf",
             "localtime", "hosts")


class LocalSandbox(Sandbox):
    name = "local"

    def __init__(self, config: LocalConfig | None = None) -> None:
        config = config or LocalConfig()
        found = config.bwrap or shutil.which("bwrap") or "/usr/bin/bwrap"
        self.bwrap = found if os.access(found, os.X_OK) else None
        if not self.isolated and not config.allow_unisolated:
            raise SandboxUnavailable(
                "bubblewrap (bwrap) is not installed, so untrusted code cannot be isolated here: "
                "apt-get install bubblewrap, or use the docker backend; allow_unisolated=True "
                "runs without isolation, for development only")
        remove_stale()

    @property
    def isolated(self) -> bool:
        return self.bwrap is not None

    def close(self) -> None:
        """Nothing: every run's bwrap, cgroup and folders are gone when it returns."""

    def run(
        self,
        files: Mapping[str, bytes],
        argv: Sequence[str],
        limits: Limits,
        options: RunOptions | None = None,
    ) -> Outcome:
        options = options or RunOptions()
        if options.gpus:
            raise SandboxUnavailable("the local backend has no GPU path; run GPU jobs on the docker backend")
        memory_bytes = limits.memory_mb * 1024 * 1024
        cgroup = RunCgroup.create(memory_bytes, limits.pids, limits.cpus)
        notes: list[str] = [UNISOLATED_NOTE] if not self.isolated else []
        extra: JobLimits = {}
        if cgroup is None:
            notes.append("no memory cgroup here: memory and processes limited by rlimits only")
            extra = {"address_space_bytes": memory_bytes, "nproc": limits.pids}
        scratch = tempfile.mkdtemp(prefix="graphdojo-") if not self.isolated else None
        filter_fd = _seccomp_fd() if self.isolated and filter_supported() else None
        if filter_fd is None and self.isolated:
            notes.append("no seccomp filter on this architecture")
        # Unisolated, the program cannot switch uids or mount anything: nothing to lend.
        delegation = Delegation(limits.pids) if self.isolated else None
        try:
            command = self._command(limits, filter_fd, delegation.mounts() if delegation else {},
                                    memory=cgroup if cgroup is not None and self.isolated else None)
            command += ["--preload", ",".join(options.preload)] if options.preload else []
            workdir = os.path.join(scratch, "job") if scratch else WORKDIR
            env = {**options.env, **(delegation.env() if delegation else {})}
            if cgroup is not None and self.isolated:
                env[MEMORY_USAGE_ENV] = MEMORY_USAGE_FILE
            job = encode_job(files, argv, limits, env, workdir, extra, trusted=options.trusted,
                             secret=options.secret)
            return self._run(command, job, limits, cgroup, notes, memory_by_rlimit=cgroup is None,
                             pass_fds=() if filter_fd is None else (filter_fd,), trusted=options.trusted)
        finally:
            if filter_fd is not None:
                os.close(filter_fd)
            if delegation is not None:
                delegation.release()
            if cgroup is not None:
                cgroup.remove()
            if scratch:
                shutil.rmtree(scratch, ignore_errors=True)

    def _command(self, limits: Limits, filter_fd: int | None, mounts: Mapping[str, str],
                 memory: RunCgroup | None = None) -> list[str]:
        python = sys.executable
        if not self.isolated:
            return [python, "-I", "-c", BOOTSTRAP_SOURCE]
        tmpfs_bytes = str(limits.tmpfs_mb * 1024 * 1024)
        command = [
            cast(str, self.bwrap),  # set whenever the sandbox is isolated
            "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
            "--new-session", "--die-with-parent", "--as-pid-1", "--clearenv",
            "--hostname", "sandbox",
            "--cap-drop", "ALL",
        ]
        for capability in CAPABILITIES:
            command += ["--cap-add", capability]
        command += ["--ro-bind", "/usr", "/usr"]
        for top in ("bin", "lib", "lib32", "lib64", "libx32", "sbin"):
            path = Path("/") / top
            if path.is_symlink():
                command += ["--symlink", os.readlink(path), str(path)]
            elif path.is_dir():
                command += ["--ro-bind", str(path), str(path)]
        for name in ETC_FILES:
            command += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
        # The private /tmp comes first, so that a Python installed under /tmp (a CI clone,
        # say) is bound on top of it rather than hidden by it.
        command += ["--perms", "0711", "--size", tmpfs_bytes, "--tmpfs", "/tmp"]  # root alone writes
        bound = sorted({sys.prefix, sys.base_prefix, os.path.dirname(os.path.dirname(os.path.realpath(python)))})
        bound = [prefix for prefix in bound if not prefix.startswith("/usr/")]
        for prefix in bound:
            command += ["--ro-bind", prefix, prefix]
        # bwrap makes the folders above a bind 0700: the judge's child (the lent uid) must
        # get through them to the interpreter, as it can on the host.
        for parent in sorted({str(p) for prefix in bound for p in Path(prefix).parents if str(p) not in ("/", "/tmp")}):
            command += ["--chmod", "0755", parent]
        command += ["--proc", "/proc"]
        command += _proc_protections()
        command += [
            "--dev", "/dev",
            "--size", tmpfs_bytes, "--tmpfs", WORKDIR,
        ]
        for source, target in mounts.items():  # the lent child cgroup (delegation.py)
            command += ["--bind", source, target]
        if memory is not None:  # read-only: what the run's cgroup holds, for the judge to measure
            command += ["--ro-bind", memory.usage_file, MEMORY_USAGE_FILE,
                        "--ro-bind", memory.stat_file, MEMORY_STAT_FILE]
        command += [
            "--remount-ro", "/",
            "--chdir", "/",
        ]
        if filter_fd is not None:
            command += ["--seccomp", str(filter_fd)]
        return command + [python, "-I", "-c", BOOTSTRAP_SOURCE]

    def _run(self, command: list[str], job: bytes, limits: Limits, cgroup: RunCgroup | None,
             notes: list[str], memory_by_rlimit: bool, pass_fds: tuple[int, ...] = (),
             trusted: bool = False) -> Outcome:
        # The worker's environment (secrets included) never reaches the sandbox.
        env = {"PATH": "/usr/bin:/bin", "GD_CGROUP_PROCS": " ".join(cgroup.procs_files if cgroup else [])}
        # Join the cgroup before exec, so that nothing the sandbox forks escapes it.
        launcher = ["/bin/sh", "-c", 'for f in $GD_CGROUP_PROCS; do echo $$ > "$f" || exit 125; done; exec "$@"', "sh"]
        started = time.monotonic()
        deadline = started + STARTUP_GRACE_S + limits.wall_s + HOST_GRACE_S
        process = subprocess.Popen(
            launcher + command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=env, start_new_session=True, close_fds=True, pass_fds=pass_fds)
        try:
            stdout, stderr, ended = pump(process, job, report_budget(limits, trusted=trusted) + len(READY), deadline)
        finally:
            if process.poll() is None:
                _kill(process)
            if cgroup is not None:
                cgroup.kill_all()
            process.wait()
        wall = time.monotonic() - started
        oom = cgroup.oom_kills() > 0 if cgroup else False
        peak = cgroup.peak_bytes() if cgroup else 0
        # What the program handed over before the end reached the host even if no report did.
        checkpoint, report = split_stream(stdout)
        if ended != "eof":
            status: Status = "timeout" if ended == "deadline" else "sandbox_error"
            return failed_outcome(status, self.name, wall, notes, f"stopped by the host: {ended}", checkpoint)
        try:
            return outcome_from_report(report, limits, self.name, oom_seen=oom, peak_bytes=peak,
                                       memory_by_rlimit=memory_by_rlimit, notes=notes, checkpoint=checkpoint)
        except ProtocolError as error:
            if oom:
                return failed_outcome("memory", self.name, wall, notes, "the sandbox was OOM-killed", checkpoint)
            detail = stderr.decode(errors="replace").strip()[-2000:]
            return failed_outcome(
                "sandbox_error", self.name, wall, notes, f"{error}; exit {process.returncode}: {detail}", checkpoint)


def _seccomp_fd() -> int:
    """A fresh fd holding the seccomp program (bwrap reads it from the current offset)."""
    fd = os.memfd_create("graphdojo-seccomp")
    os.write(fd, filter_program())
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _proc_protections() -> list[str]:
    """Make /proc as safe for an uncapable uid 0 as Docker makes it.

    Files such as /proc/sysrq-trigger and /proc/sys/kernel/core_pattern are guarded by
    their mode alone (root-owned, writable by root), and our program is real uid 0:
    without this it could reboot the host. bwrap only covers /proc/sys when its own
    access() check says so, which fails once it has dropped CAP_DAC_OVERRIDE. The host's
    /proc/sys is bound (read-only) over the sandbox's: sysctls answer for the reader's
    namespaces, so the sandbox still sees its own hostname and network values.
    """
    options: list[str] = []
    for name in PROC_READ_ONLY:
        if os.path.exists(f"/proc/{name}"):
            options += ["--ro-bind", f"/proc/{name}", f"/proc/{name}"]
    for name in (*PROC_MASKED, *HOST_COUNTERS_IN_PROC):  # and the host's activity counters (base.py)
        path = f"/proc/{name}"
        if os.path.isdir(path):
            options += ["--tmpfs", path, "--remount-ro", path]
        elif os.path.exists(path):  # as Docker does: a read finds it empty (bwrap's --ro-bind would be nodev: EACCES)
            options += ["--dev-bind", "/dev/null", path]
    return options


def pump(process: subprocess.Popen[bytes], job: bytes, budget: int, deadline: float) -> tuple[bytes, bytes, str]:
    """Feed the job, read stdout within ``budget`` bytes and stderr within 64 KiB, until EOF or deadline.

    Returns (stdout, stderr, how it ended: "eof", "deadline" or "report too large").
    """
    selector = selectors.DefaultSelector()
    # all three are pipes (the caller's Popen)
    stdin, stdout, stderr = (cast(IO[bytes], s) for s in (process.stdin, process.stdout, process.stderr))
    os.set_blocking(stdin.fileno(), False)
    selector.register(stdin, selectors.EVENT_WRITE)
    selector.register(stdout, selectors.EVENT_READ)
    selector.register(stderr, selectors.EVENT_READ)
    received = {stdout: bytearray(), stderr: bytearray()}
    caps = {stdout: budget, stderr: 64 * 1024}
    view = memoryview(job)
    open_readers = 2
    while open_readers:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return bytes(received[stdout]), bytes(received[stderr]), "deadline"
        for key, _ in selector.select(min(remaining, 1.0)):
            if key.fileobj is stdin:
                try:
                    view = view[os.write(stdin.fileno(), view[:65536]):]
                except (BrokenPipeError, BlockingIOError) as error:
                    if isinstance(error, BrokenPipeError):
                        view = view[:0]
                if not view:
                    selector.unregister(stdin)
                    stdin.close()
                continue
            reader = cast(IO[bytes], key.fileobj)  # stdout or stderr
            chunk = os.read(reader.fileno(), 65536)
            if not chunk:
                selector.unregister(reader)
                open_readers -= 1
                continue
            buffer = received[reader]
            if len(buffer) + len(chunk) > caps[reader]:
                if reader is stdout:
                    return bytes(buffer), bytes(received[stderr]), "report too large"
                chunk = chunk[:max(0, caps[stderr] - len(buffer))]
            buffer += chunk
    return bytes(received[stdout]), bytes(received[stderr]), "eof"


def _kill(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
