"""The judge's side of a worker: a process it starts, calls into, times, freezes and kills.

The student's program runs under the uid the sandbox lent for it (unique on the host; see
sandbox/delegation.py), the reference under that uid's trusted twin: both with no
capabilities (when the judge is root inside the sandbox), each in a home of its own that
the zygote makes (the only place it can write). The student also has its own rlimits and
the cgroup the sandbox lent (frozen and thawed as one, and capped in processes). A worker
is sent its program's source; it never reads the bundle. The student's stdout and stderr
are pipes the judge reads: what was written cannot be taken back. The judge keeps the
clock, the hidden files and the result channel; the student can only answer requests,
and every reply is checked field by field before use.
"""
from __future__ import annotations

import contextlib
import errno
import functools
import json
import os
import resource
import secrets
import select
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from grader import contract
from grader.harness import wire
from grader.harness.api import CheckFailed, ProgramError, ProgramStopped
from grader.harness.messages import Message
from grader.harness.worker import HEAVY_MODULES
from sandbox.framing import (
    CHILD_UID_ENV,
    MEMINFO,
    MEMORY_STAT_FILE,
    MEMORY_USAGE_ENV,
    MEMORY_USAGE_FILE,
    TRUSTED_UID_ENV,
)
from sandbox.zygote import Exit, LentCgroup, Zygote, lent_uid

FALLBACK_UID = 65534  # "nobody", for a sandbox that lends no uid
FALLBACK_TRUSTED_UID = 65533  # ...and a uid that is not the student's, for the reference
FILE_SIZE_LIMIT = 16 * 2**20  # any file the student writes
STUDENT_DESCRIPTORS = 512  # open at once by one student process (RLIMIT_NOFILE)
PIPE_BUFFER_BYTES = 64 * 2**10  # a pipe's default buffer, which a confined process cannot grow (sandbox/zygote.py)
FREEZE_TIMEOUT_S = 5.0
RESTART_PAUSES_S = (0.25, 0.5, 1.0)  # between tries to start a fresh worker (see Program.restart)
OPERATOR_LOG: list[str] = []  # judge tracebacks: for the operators, never shown to the student
# Which heavy modules the worker inherited is noted before anything of the harness imports them.
_BOOT = (f"import sys; inherited = [m for m in {HEAVY_MODULES!r} if m in sys.modules]; "
         "sys.path.insert(0, sys.argv[1]); from grader.harness.worker import main; main(inherited)")
# The student's worker of an exercise with rules: the zygote's fork becomes a fresh interpreter
# (same uid, limits, cgroup and descriptors), which installs the rules before it imports
# anything, then the frameworks, then the harness (contract.start_ruled). ``-c RULED_BOOT RULES
# FRAMEWORKS LIB 3 4``. What it imports before the program counts as inherited.
RULED_BOOT = ("import json, sys; sys.path.insert(0, sys.argv[3]); from grader import contract; "
              "contract.start_ruled(json.loads(sys.argv[1]), [m for m in sys.argv[2].split(',') if m]); "
              f"inherited = [m for m in {HEAVY_MODULES!r} if m in sys.modules]; "
              "from grader.harness.worker import main; main(inherited)")
_FRESH = f"import os, sys; os.execv(sys.executable, [sys.executable, '-I', '-c', {RULED_BOOT!r}, *sys.argv[1:]])"
STARTUP_TIMEOUT_S = 300.0  # a fresh worker importing its frameworks: off the student's budget
_PR_SET_NO_NEW_PRIVS = 38



def privileged() -> bool:
    """True when the judge starts the student under another uid: root in a real sandbox.

    In unisolated development mode the host says so, and the judge runs the student under
    its own uid (and the verdict says so) instead of failing on a machine without bwrap.
    """
    return os.geteuid() == 0 and os.environ.get(contract.UNISOLATED_ENV) != "1"


def student_uid() -> int:
    """The uid the student runs as: the sandbox's lent uid, else nobody."""
    return lent_uid(CHILD_UID_ENV) or FALLBACK_UID


def reference_uid() -> int:
    """The uid the reference runs as: the lent uid's trusted twin. Never root: it needs none."""
    return lent_uid(TRUSTED_UID_ENV) or FALLBACK_TRUSTED_UID


@functools.cache
def zygote() -> Zygote:
    """Where workers come from: the zygote the sandbox lent this judge (forked before the
    job was read, with numpy and torch imported), else a fresh one of its own (tests, tools)."""
    return Zygote.lent() or Zygote.launch(preload=("numpy",))


def log_for_operators(what: str) -> None:
    """Keep the current exception's traceback for the operators' field of the result."""
    OPERATOR_LOG.append(f"{what}\n{traceback.format_exc(limit=20)[-4000:]}")


class OutputLimitExceeded(Exception):
    """The student printed more than its output limit."""


class Capture:
    """One of the student's output streams: a pipe, read by the judge whenever it waits.

    It counts every byte and keeps the first ``keep`` until ``seal()`` (the first hidden
    case): the student cannot rewrite what it already wrote, and nothing written later
    is kept. The judge holds the write end too, so a restarted worker gets the same pipe.
    """

    def __init__(self, keep: int, limit: int):
        self.read_fd, self.write_fd = os.pipe()
        os.set_blocking(self.read_fd, False)
        self.keep, self.limit = keep, limit
        self.kept = bytearray()
        self.total = 0
        self.sealed_at: int | None = None

    def drain(self) -> None:
        while True:
            try:
                chunk = os.read(self.read_fd, 1 << 16)
            except BlockingIOError:
                break
            if not chunk:
                break
            self.total += len(chunk)
            if self.sealed_at is None and len(self.kept) < self.keep:
                self.kept += chunk[: self.keep - len(self.kept)]
        if self.total > self.limit:
            raise OutputLimitExceeded

    def seal(self) -> None:
        try:
            self.drain()
        except OutputLimitExceeded:
            pass
        if self.sealed_at is None:
            self.sealed_at = self.total


def _drain(captures: list[Capture], ready: list[int]) -> None:
    for capture in captures:
        if capture.read_fd in ready:
            capture.drain()


class _Deadline:
    def __init__(self, seconds: float):
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        return self.end - time.monotonic()


class _Reader:
    """Blocking reads from a pipe that give up at a deadline, draining the output pipes meanwhile."""

    def __init__(self, fd: int, captures: list[Capture]):
        self.fd = fd
        self.captures = captures
        self.deadline = _Deadline(1e9)

    def read(self, size: int) -> bytes:
        watched = [self.fd, *(c.read_fd for c in self.captures)]
        while True:
            left = self.deadline.left()
            ready = select.select(watched, [], [], left)[0] if left > 0 else []
            if not ready:
                raise TimeoutError
            _drain(self.captures, ready)
            if self.fd in ready:
                return os.read(self.fd, min(size, 1 << 20))


class Process:
    """One worker process and its pipes."""

    def __init__(
        self,
        side: str,
        program: Path,
        *,
        lib: Path,
        env: dict[str, str],
        uid: int | None,
        untrusted: bool,
        rlimits: dict[int, int],
        stdout: Path | Capture,
        stderr: Path | Capture,
        cgroups: Sequence[str] = (),
        max_reply_bytes: int = wire.MAX_FRAME_BYTES,
        rules: Sequence[contract.Rule] = (),
    ):
        self.side, self.program, self.lib, self.env = side, program, lib, env
        self.uid, self.untrusted, self.rlimits = uid, untrusted, rlimits  # uid None: the judge's own
        self.stdout, self.stderr = stdout, stderr
        self.captures = [c for c in (stdout, stderr) if isinstance(c, Capture)]
        self.cgroups = list(cgroups)  # cgroup.procs files the new process joins before it drops its uid
        self.max_reply_bytes = max_reply_bytes  # the student's: its own memory limit, so no reply can swamp the judge
        # Rules that ban a module: the process is a fresh interpreter that never holds one.
        self.rules = list(rules) if contract.banned_modules(rules) else []
        self._pid = -1
        self.status: Exit | None = None  # once reaped

    def start(self) -> None:
        """Start the worker, forked by the zygote; OSError when it cannot be (e.g. EAGAIN)."""
        request_read, self.request_write = os.pipe()
        self.reply_read, reply_write = os.pipe()
        out, err = (_open_output(target) for target in (self.stdout, self.stderr))
        stdin = os.open(os.devnull, os.O_RDONLY)
        try:
            self._pid, self.home = zygote().spawn(
                self.argv(),
                family=self.side,
                env=self.env,
                fds=(stdin, out, err, request_read, reply_write),
                uid=self.uid,
                # the student's CPU limit: SIGXCPU first, SIGKILL a second later
                rlimits=[(which, value, value + 1 if which == resource.RLIMIT_CPU else value)
                         for which, value in self.rlimits.items()],
                cgroup_procs=self.cgroups,  # joined while still root: the student can never move out
                oom_score_adj=1000 if self.untrusted else None,  # the OOM killer takes the student first
            )
        except OSError:
            for fd in (self.request_write, self.reply_read):
                os.close(fd)
            del self.request_write, self.reply_read
            raise
        finally:
            for fd in (request_read, reply_write, stdin):
                os.close(fd)
            for target, fd in ((self.stdout, out), (self.stderr, err)):
                if not isinstance(target, Capture):
                    os.close(fd)
        self.status = None
        self.reader = _Reader(self.reply_read, self.captures)
        os.set_blocking(self.request_write, False)

    def argv(self) -> list[str]:
        if not self.rules:
            return ["-c", _BOOT, str(self.lib), "3", "4"]
        # The frameworks the judge holds (the sandbox preloaded them for this exercise) but a banned one.
        frameworks = [m for m in HEAVY_MODULES if m in sys.modules]
        return ["-c", _FRESH, json.dumps(self.rules), ",".join(frameworks), str(self.lib), "3", "4"]

    @property
    def pid(self) -> int:
        return self._pid

    @property
    def started(self) -> bool:
        return self._pid > 0

    @property
    def alive(self) -> bool:
        return self.started and self.status is None

    def exchange(
        self, header: dict[str, Any], blobs: list[bytes], timeout: float
    ) -> tuple[dict[str, Any], list[bytes], float, int]:
        """Send one request and wait for its reply; returns (reply, blobs, seconds elapsed, the
        judge's own CPU and run delay in those seconds, in nanoseconds).

        The request carries a fresh random id that the reply must name: a reply written
        before the request arrived is a protocol error, not a fast answer.
        """
        nonce = secrets.token_hex(16)
        data = wire.frame_bytes(dict(header, id=nonce), blobs)
        deadline = _Deadline(timeout)
        self.reader.deadline = deadline
        own_before = _own_schedstat()
        start = time.perf_counter()
        self._write_all(data, deadline)
        reply, reply_blobs = wire.read_frame(self.reader, self.max_reply_bytes)
        elapsed = time.perf_counter() - start
        own_after = _own_schedstat()
        judged_ns = sum(own_after) - sum(own_before) if own_before and own_after else 0
        if reply.get("re") != nonce:
            raise wire.ProtocolError("a reply that does not answer the request")
        return reply, reply_blobs, elapsed, judged_ns

    def _write_all(self, data: bytes, deadline: _Deadline) -> None:
        view = memoryview(data)
        outputs = [c.read_fd for c in self.captures]
        while view:
            left = deadline.left()
            ready = select.select(outputs, [self.request_write], [], left) if left > 0 else ([], [], [])
            _drain(self.captures, ready[0])
            if not ready[1]:
                if ready[0]:
                    continue
                raise TimeoutError
            try:
                written = os.write(self.request_write, view[: 1 << 20])
            except BlockingIOError:
                continue
            view = view[written:]

    def reap(self, wait: float = 2.0) -> Exit | None:
        """How the process ended, waiting up to ``wait`` seconds for it to end."""
        if self.status is None and self.started:
            self.status = zygote().wait(self._pid, wait)
        return self.status

    def close(self) -> None:
        for fd in ("request_write", "reply_read"):
            if hasattr(self, fd):
                try:
                    os.close(getattr(self, fd))
                except OSError:
                    pass
                delattr(self, fd)


class Family:
    """The student's processes: the worker and everything it started, frozen, thawed and killed as one.

    With the cgroup the sandbox lent (sandbox/zygote.py ``LentCgroup``), every process the
    worker starts is in it, and freezing is one write that the kernel applies to all of them
    at once: no fork can slip through. Without one (gVisor, whose cgroupfs has no freezer),
    the processes are found in /proc by their real uid, the one the sandbox lent for the
    student alone (no process can change it, nor hide it as it can its /proc owner), and
    signalled, and a freeze only counts once every one of them is seen stopped; a student
    that keeps a process running through that loses the case. Signals go out with the
    student's uid as effective uid.
    """

    def __init__(self, trusted: Callable[[], set[int]], cgroup: LentCgroup | None = None) -> None:
        self.trusted = trusted  # pids of trusted workers, whose subtrees are not the student's
        self.cgroup = cgroup  # the cgroup the sandbox lent, when there is one this judge may use

    @classmethod
    def for_sandbox(cls, trusted: Callable[[], set[int]]) -> Family:
        return cls(trusted, LentCgroup.lent() if privileged() else None)

    def join_files(self) -> list[str]:
        """The cgroup.procs files a new student process writes itself into."""
        return self.cgroup.join_files() if self.cgroup is not None else []

    def limit_processes(self, count: int) -> bool:
        """Cap the student's processes in the cgroup (within the sandbox's own cap); False without one."""
        if self.cgroup is None:
            return False
        self.cgroup.limit_processes(count)
        return True

    # -- finding, freezing, killing --

    def pids(self) -> list[int]:
        if self.cgroup is not None:
            return self.cgroup.pids()
        return list(self._states())

    def _states(self) -> dict[int, bytes]:
        """pid -> state of each student process, from one listing of /proc (without the cgroup)."""
        listed = _processes()
        if privileged():  # the lent uid is this sandbox's alone: whatever runs under it is the student's
            uid = student_uid()
            return {pid: state for pid, state, _ in listed if _real_uid(pid) == uid}
        # Unisolated (development): the zygote's children but the trusted ones, and their descendants.
        children: dict[int, list[int]] = {}
        for pid, _, ppid in listed:
            children.setdefault(ppid, []).append(pid)
        states = {pid: state for pid, state, _ in listed}
        trusted = self.trusted()
        found, todo = {}, [p for p in children.get(zygote().pid, []) if p not in trusted]
        while todo:
            pid = todo.pop()
            found[pid] = states[pid]
            todo.extend(children.get(pid, []))
        return found

    def signal_all(self, signum: int, repeat: int = 4) -> None:
        """Send ``signum`` to every student process, again until no new one appears."""
        done: set[int] = set()
        for _ in range(repeat):
            pending = [p for p in self.pids() if p not in done]
            if not pending:
                return
            with _as_student():
                for pid in pending:
                    try:
                        os.kill(pid, signum)
                    except (ProcessLookupError, PermissionError):
                        pass
            done.update(pending)

    def freeze(self, settle: bool = False) -> None:
        """Stop every student process; ProgramStopped when one cannot be stopped.

        With the cgroup, one write makes the kernel stop every task in it, and any task
        forked from then on, before it runs another user instruction; ``settle`` waits for
        the state to read frozen, which only matters before listing the tasks to kill.
        """
        if self.cgroup is not None:
            if not self.cgroup.freeze(settle_s=FREEZE_TIMEOUT_S if settle else 0.0):
                raise ProgramStopped("student", "RUNTIME_ERROR", Message("stop.unpausable"))
            return
        # Without it, a freeze counts once two listings in a row find the same processes, all
        # stopped. One is not enough: a process may stop just after finishing a fork whose child
        # the listing missed (gVisor completes a fork under a pending SIGSTOP); a stopped process
        # forks no more, so the next listing holds every child it made.
        deadline, stopped = _Deadline(FREEZE_TIMEOUT_S), None
        while True:
            self.signal_all(signal.SIGSTOP)
            states = self._states()
            if all(state in _NOT_RUNNING for state in states.values()):
                if stopped == set(states):
                    return
                stopped = set(states)
                continue
            stopped = None
            if deadline.left() <= 0:
                self.kill()
                raise ProgramStopped("student", "RUNTIME_ERROR", Message("stop.unpausable"))
            time.sleep(0.001)

    def thaw(self) -> None:
        if self.cgroup is not None:
            self.cgroup.thaw()
        else:
            self.signal_all(signal.SIGCONT)

    def kill(self) -> None:
        if self.cgroup is None:
            self.signal_all(signal.SIGKILL)
            return
        # Frozen, nobody can fork; killed, then thawed so that the kill takes effect.
        try:
            self.freeze(settle=True)
        except ProgramStopped:
            pass  # a task that would not settle: kill what is listed all the same
        listed = self.pids()
        with _as_student():
            for pid in listed:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        self.cgroup.thaw()


# States of a process that runs nothing: stopped, traced, dead, or in uninterruptible sleep (a
# vfork parent waiting for its stopped child runs nothing until it wakes, and then stops).
_NOT_RUNNING = (b"T", b"t", b"Z", b"X", b"D")


def _processes() -> list[tuple[int, bytes, int]]:
    """(pid, state, parent pid) of every process this judge can see."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as file:
                stat = file.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        found.append((int(entry), fields[0], int(fields[1])))
    return found


def _proc_status(pid: int) -> dict[str, str]:
    """The fields of /proc/<pid>/status ({} if it is gone); see ``status_fields``."""
    try:
        with open(f"/proc/{pid}/status") as file:
            return status_fields(file.read())
    except OSError:
        return {}


def status_fields(text: str) -> dict[str, str]:
    """The fields of a /proc status file, read past the process's name.

    The name comes first and is the process's to choose (prctl PR_SET_NAME). Linux escapes a
    newline in it; gVisor writes it raw, so a process named "x\nUid:\t0" read as root's and
    slipped out of the student's family: never frozen, killed or measured (red team round 8).
    Every real field follows the State line, so only what follows the last one is read."""
    at = text.rfind("\nState:")
    fields: dict[str, str] = {}
    for line in text[at + 1 if at >= 0 else len(text):].splitlines():
        name, colon, value = line.partition(":")
        if colon:
            fields.setdefault(name, value.strip())
    return fields


def _real_uid(pid: int) -> int | None:
    """The real uid of ``pid`` from its status file, which no process can hide by changing its dumpable flag."""
    try:
        return int(_proc_status(pid)["Uid"].split()[0])
    except (KeyError, ValueError, IndexError):
        return None


def _private_resident_bytes(pid: int) -> int:
    """The anonymous and shared-memory pages of ``pid`` that are resident: what it holds. Pages
    of mapped files (torch's libraries) are left out: under the sandbox's memory limit the
    kernel evicts and reads them again at will. Where /proc shows no split (gVisor), VmRSS."""
    fields = _proc_status(pid)
    try:
        if "RssAnon" in fields:
            return sum(int(fields[name].split()[0]) * 1024 for name in ("RssAnon", "RssShmem") if name in fields)
        return int(fields["VmRSS"].split()[0]) * 1024 if "VmRSS" in fields else 0
    except (ValueError, IndexError):
        return 0


def _pipe_buffer_bytes(pids: Sequence[int], hidden_is_full: bool) -> int:
    """The most the pipes that ``pids`` hold open can buffer, each distinct pipe counted once and
    full. gVisor keeps pipe buffers in its own heap, outside the meminfo the sandbox's charge is
    read from (sockets are denied to confined processes, and a pipe cannot grow past
    PIPE_BUFFER_BYTES, but a family of many processes with many pipes each could still hide a
    GiB there). A process whose descriptors cannot be listed counts as if every one were a full
    pipe (``hidden_is_full``, for the student's)."""
    pipes: set[str] = set()
    hidden = 0
    for pid in pids:
        try:
            entries = os.listdir(f"/proc/{pid}/fd")
        except FileNotFoundError:
            continue  # gone
        except OSError:
            hidden += STUDENT_DESCRIPTORS if hidden_is_full else 0
            continue
        for entry in entries:
            try:
                target = os.readlink(f"/proc/{pid}/fd/{entry}")
            except OSError:
                continue
            if target.startswith("pipe:"):
                pipes.add(target)
    return (len(pipes) + hidden) * PIPE_BUFFER_BYTES


def _sandbox_charged_bytes() -> int | None:
    """The bytes of memory the whole sandbox holds now, where the sandbox shows them (its memory
    cgroup, or gVisor's own /proc/meminfo; sandbox/framing.py), else None. Outside a
    sandbox they are the host's, which other work moves: None.

    A memory cgroup's count leaves out its page cache (``_page_cache_bytes``): pages of files
    read from disk, which whoever reads or drops files (the student) raises and lowers at will
    and which hold nothing of a program's own (red team round 5: an earlier worker read 80 MB
    of headers, the measured one dropped them and parked its activations in that room)."""
    if not privileged():
        return None
    where = os.environ.get(MEMORY_USAGE_ENV, "")
    try:
        if where == MEMINFO:
            with open("/proc/meminfo") as file:
                fields = {name: value.split() for name, _, value in (line.partition(":") for line in file)}
            return (int(fields["MemTotal"][0]) - int(fields["MemFree"][0])) * 1024
    except (OSError, ValueError, KeyError, IndexError):
        return None
    docker_shows = ["/sys/fs/cgroup/memory.current", "/sys/fs/cgroup/memory/memory.usage_in_bytes"]
    for usage in [where] if where else docker_shows:
        try:
            with open(usage) as file:
                charged = int(file.read())
        except (OSError, ValueError):
            continue
        stat = MEMORY_STAT_FILE if usage == MEMORY_USAGE_FILE else os.path.join(os.path.dirname(usage), "memory.stat")
        return max(0, charged - _page_cache_bytes(stat))
    return None


def _page_cache_bytes(stat: str) -> int:
    """The file pages a memory cgroup charges (cgroup v1's hierarchical totals, or v2's), from its
    memory.stat. tmpfs, memfd and shared memory are swap-backed and counted on the anon lists,
    so what a program writes to its home or a memfd is never taken off; 0 when unreadable."""
    try:
        with open(stat) as file:
            fields = dict(line.split()[:2] for line in file if len(line.split()) >= 2)
        prefix = "total_" if "total_active_file" in fields else ""
        return int(fields.get(prefix + "active_file", 0)) + int(fields.get(prefix + "inactive_file", 0))
    except (OSError, ValueError):
        return 0


def _open_output(target: Path | Capture) -> int:
    if isinstance(target, Capture):
        return target.write_fd
    return os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)


class _as_student:
    """Effective uid of the student while signalling it; back to root afterwards."""

    def __enter__(self) -> None:
        self.switched = privileged()
        if self.switched:
            os.seteuid(student_uid())

    def __exit__(self, *exc: Any) -> None:
        if self.switched:
            os.seteuid(0)


class Program:
    """One side (student or reference) as the checks see it: calls in, plain data out."""

    def __init__(
        self, side: str, process: Process, family: Family | None, *, stopped_while_measured: Family | None = None,
    ) -> None:
        self.side = side
        self.process = process
        self.family = family
        # For the reference: the student's processes, stopped while its memory is measured
        # (``others_stopped``): the sandbox's count would charge the reference with what a
        # student's thread allocates meanwhile (red team round 5 inflated it by 320 MB).
        self.stopped_while_measured = stopped_while_measured
        self.loaded = False
        self.fresh_imports: list[str] = []  # heavy modules its worker imported itself (diagnostics)
        self.budget_s = float("inf")  # seconds of calls left; the judge sets it per phase
        # While set, every exchange with this program adds its seconds here: a timed call is
        # its setup and the call together (``stopwatch``).
        self._watched: float | None = None
        self._judged_ns = 0  # the judge's own CPU and run delay inside those exchanges
        self.check_mutation = side == "student"
        self._memory_at_start: tuple[int, int, int | None] = (0, 0, None)  # see held_memory_bytes

    # -- lifecycle --

    def start(self, timeout: float) -> None:
        """Start the worker and load the program; raises ProgramError / ProgramStopped."""
        try:
            self.process.start()
        except OSError as error:
            if self.side != "student":
                raise
            # EAGAIN and the like: the student's own processes hold what a new one needs.
            reason = errno.errorcode.get(error.errno or 0, "OSError")
            raise ProgramStopped(self.side, "RUNTIME_ERROR", Message("stop.cannot_start", reason=reason)) from None
        self.loaded = False
        if self.process.rules:  # a fresh interpreter: its imports are not the program's time, nor timed
            watched, self._watched = self._watched, None
            try:
                self._exchange({"op": "ready"}, [], STARTUP_TIMEOUT_S)
            finally:
                self._watched = watched
        self._memory_at_start = self._memory_now()  # before the program's module runs a line
        source = self.process.program.read_bytes()  # read here, as root: the worker cannot read the bundle
        load = {"op": "load", "filename": f"{self.module_name}.py", "module": self.module_name}
        reply, _, elapsed = self._exchange(load, [source], timeout)
        self.budget_s -= elapsed
        if not reply["ok"]:
            raise self._error(reply, syntax=reply.get("syntax") is True)
        fresh = reply.get("fresh")
        if type(fresh) is list:
            self.fresh_imports = [m for m in HEAVY_MODULES if m in fresh]
        self.loaded = True

    @property
    def module_name(self) -> str:
        return "submission" if self.side == "student" else "solution"

    def ensure_started(self) -> None:
        if not self.process.alive or not self.loaded:
            self.stop()
            self.start(self.call_timeout())

    def stop(self) -> None:
        if not self.process.started:
            return
        if self.family is not None:
            self.family.kill()
        else:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        self.process.reap()
        self.process.close()
        self.loaded = False

    def call_timeout(self) -> float:
        if self.budget_s <= 0:
            raise ProgramStopped(self.side, "TIME_LIMIT", Message("stop.budget_used"))
        return self.budget_s

    # -- calls --

    def call(
        self, number: int, name: str | None, args: tuple[Any, ...], kwargs: dict[str, Any], *, invoke: bool = True
    ) -> Any:
        value, _ = self.timed_call(number, name, args, kwargs, invoke=invoke)
        return value

    def timed_call(
        self, number: int | None, name: str | None, args: tuple[Any, ...], kwargs: dict[str, Any], *,
        invoke: bool = True, timeout: float | None = None, grad: bool = False,
    ) -> tuple[Any, float]:
        """Call ``obj.name(*args, **kwargs)`` in the worker (``args[0](*args[1:])`` when number is
        None); the judge's clock measures it."""
        self.ensure_started()
        encoder = wire.Encoder(self._encode_other)
        header = {
            "op": "call" if number is not None else "apply",
            "obj": number,
            "name": name,
            "call": invoke,
            "grad": grad,
            "args": [encoder.encode(a) for a in args],
            "kwargs": {k: encoder.encode(v) for k, v in kwargs.items()},
            "digests": True,
        }
        sent = [self._fingerprint(a) for a in args] + [self._fingerprint(kwargs[k]) for k in sorted(kwargs)]
        limit = self.call_timeout() if timeout is None else timeout
        reply, blobs, elapsed = self._exchange(header, encoder.blobs, limit, digests=len(sent))
        if timeout is None:
            self.budget_s -= elapsed
        if not reply["ok"]:
            raise self._error(reply)
        if self.check_mutation and reply["digests"] != sent:
            changed = [i + 1 for i, (a, b) in enumerate(zip(sent, reply["digests"], strict=False)) if a != b]
            raise CheckFailed(Message("check.changed_input", argument=changed[0]))
        decoder = wire.Decoder(blobs, handle=self._decode_handle)
        try:
            return decoder.decode(reply.get("value")), elapsed
        except Exception:  # noqa: BLE001 - whatever a reply does to the decoder, it is the reply's fault
            return self._bad_reply("decoding a reply"), elapsed

    def release(self, handles: list[int]) -> None:
        """Let the worker drop objects the judge holds handles to (untimed, off the budget)."""
        if handles and self.process.alive:
            reply, _, _ = self._exchange({"op": "release", "handles": handles}, [], 60.0)
            if not reply["ok"]:
                raise self._error(reply)

    def restart(self) -> None:
        """A fresh worker: nothing an earlier call made, allocated or wrote is left in it."""
        self.stop()
        # Under gVisor a worker forked just after the last one (hundreds of MB) was killed can
        # fail to start (EPERM reading /dev/urandom while the memory is given back): once the
        # last one's processes are gone, a few tries, a moment apart. Only a start that failed
        # is tried again, never a program that started and then failed to load.
        deadline = _Deadline(FREEZE_TIMEOUT_S)
        while self.family is not None and self.family.pids() and deadline.left() > 0:
            time.sleep(0.01)
        for pause in RESTART_PAUSES_S:
            try:
                self.ensure_started()
                return
            except ProgramStopped as stopped:
                if stopped.reason.id != "stop.cannot_start":
                    raise
                time.sleep(pause)
        self.ensure_started()

    @contextlib.contextmanager
    def others_stopped(self) -> Iterator[None]:
        """Every other program's processes stopped for the duration (see ``stopped_while_measured``)."""
        others = self.stopped_while_measured
        if others is None:
            yield
            return
        others.freeze(settle=True)
        try:
            yield
        finally:
            others.thaw()

    def held_memory_bytes(self) -> int:
        """The memory the program's processes hold now, read by the judge (DESIGN invariant 5):
        the larger of two lower bounds, neither of which the program can lower by what it
        tells about itself or by moving what it keeps from one place to another.

        - the resident memory of every one of its processes (a child holding a copy counts),
          plus the bytes its processes wrote to the temp folder (its home) since the worker
          started;
        - the worker's resident memory when it started plus what the sandbox's memory cgroup
          charged since, where the sandbox shows one: memory no process maps (a memfd, pipe
          and socket buffers) is charged there too.

        Absolute, from the worker's start: memory the program set aside before (at import) and
        gives back while it is measured only adds to the count, never takes from it.
        """
        resident, files, charged = self._memory_now()
        resident_at_start, files_at_start, charged_at_start = self._memory_at_start
        held = resident + max(0, files - files_at_start)
        if charged is not None and charged_at_start is not None:
            held = max(held, resident_at_start + charged - charged_at_start)
        return held

    def _memory_now(self) -> tuple[int, int, int | None]:
        """(resident bytes of the program's processes, bytes used in the temp folder, bytes the
        sandbox's memory cgroup charged or None), each read by the judge."""
        pids = self.family.pids() if self.family is not None else [self.process.pid]
        resident = sum(_private_resident_bytes(pid) for pid in pids)
        files = 0
        if privileged():  # the sandbox's private /tmp; outside one, the host's moves with other work
            try:
                home_folder = os.statvfs(os.path.dirname(self.process.home))
                files = (home_folder.f_blocks - home_folder.f_bfree) * home_folder.f_frsize
            except (AttributeError, OSError):
                pass
        charged = _sandbox_charged_bytes()
        if charged is not None and os.environ.get(MEMORY_USAGE_ENV) == MEMINFO:
            charged += _pipe_buffer_bytes(pids, hidden_is_full=self.side == "student")
        return resident, files, charged

    def peak_memory_bytes(self) -> int:
        """The worker's peak resident memory so far, read by the judge from /proc (unforgeable)."""
        try:
            return int(_proc_status(self.process.pid)["VmHWM"].split()[0]) * 1024
        except (KeyError, ValueError, IndexError):
            return 0

    def _exchange(
        self, header: dict[str, Any], blobs: list[bytes], timeout: float, digests: int | None = None,
    ) -> tuple[dict[str, Any], list[bytes], float]:
        try:
            reply, reply_blobs, elapsed, judged_ns = self.process.exchange(header, blobs, timeout)
        except TimeoutError:
            self.stop()
            self.budget_s = 0 if self.budget_s != float("inf") else self.budget_s
            raise ProgramStopped(
                self.side, "TIME_LIMIT", Message("stop.no_answer", seconds=round(timeout, 1))) from None
        except OutputLimitExceeded:
            self.stop()
            limit = min(c.limit for c in self.process.captures)
            raise ProgramStopped(self.side, "OUTPUT_LIMIT", Message("stop.output_limit", limit=limit)) from None
        except (EOFError, BrokenPipeError):
            raise self._died() from None
        except wire.ProtocolError:
            self._bad_reply("reading a reply")
        except Exception:  # noqa: BLE001 - nothing in a reply may crash the judge
            self._bad_reply("reading a reply")
        if not _valid_reply(reply, len(reply_blobs), digests):
            self._bad_reply("a reply of the wrong shape")
        if self._watched is not None:
            self._watched += elapsed
            self._judged_ns += judged_ns
        return reply, reply_blobs, elapsed

    def stopwatch(self) -> Stopwatch:
        """Times everything this program is asked to do until it stops: each exchange on the
        judge's clock, and the CPU its processes use meanwhile."""
        return Stopwatch(self)

    def _bad_reply(self, what: str) -> Any:
        """Stop a program whose reply the judge could not use: the student's RUNTIME_ERROR
        (the reference's is the judge's own failure, which the judge reports as such)."""
        log_for_operators(f"the {self.side}'s reply was refused ({what})")
        self.stop()
        raise ProgramStopped(self.side, "RUNTIME_ERROR", Message("stop.bad_reply")) from None

    def _died(self) -> ProgramStopped:
        """Why the worker went away, from its wait status and the limits it ran under."""
        status = self.process.reap()
        self.stop()
        if status is None:
            return ProgramStopped(self.side, "RUNTIME_ERROR", Message("stop.closed_channel"))
        wait_status, usage = status.status, status
        cpu = usage.ru_utime + usage.ru_stime
        if os.WIFSIGNALED(wait_status):
            signum = os.WTERMSIG(wait_status)
            cpu_limit = self.process.rlimits.get(resource.RLIMIT_CPU)
            memory_limit = self.process.rlimits.get(resource.RLIMIT_DATA)
            if signum == signal.SIGXCPU or (cpu_limit and cpu >= cpu_limit - 0.5 and signum == signal.SIGKILL):
                return ProgramStopped(self.side, "TIME_LIMIT", Message("stop.cpu_limit", seconds=round(cpu, 1)))
            if signum == signal.SIGXFSZ:
                return ProgramStopped(self.side, "OUTPUT_LIMIT", Message("stop.file_too_large", limit=FILE_SIZE_LIMIT))
            if signum == signal.SIGKILL and memory_limit and usage.ru_maxrss * 1024 >= 0.8 * memory_limit:
                return ProgramStopped(self.side, "MEMORY_LIMIT", Message("stop.memory_limit"))
            name = signal.Signals(signum).name if signum in signal.Signals._value2member_map_ else str(signum)
            return ProgramStopped(self.side, "RUNTIME_ERROR", Message("stop.killed", signal=name))
        return ProgramStopped(self.side, "RUNTIME_ERROR", Message("stop.exited", status=os.WEXITSTATUS(wait_status)))

    def _error(self, reply: dict[str, Any], syntax: bool = False) -> ProgramError:
        error = reply["error"]  # shape checked by _valid_reply
        result = ProgramError(
            self.side,
            "SyntaxError" if syntax else error["type"][:100],
            error["message"][:2000],
            error["traceback"][:8000],
            error.get("line"),
        )
        result.syntax = syntax
        result.errno = error.get("errno")
        return result

    # -- values --

    def _encode_other(self, value: Any, encoder: wire.Encoder) -> Any:
        if isinstance(value, wire.Fn):
            return {"$": "fn", "src": value.source}
        if isinstance(value, Remote):
            if value._program is not self:
                raise TypeError(
                    f"an object from the {value._program.side} program cannot be passed to the {self.side} program")
            return {"$": "handle", "h": value._number}
        raise TypeError(
            f"cannot send a {type(value).__name__} to a program; send plain data, arrays, tensors or fn(...)")

    def _fingerprint(self, value: Any) -> str:
        encoder = wire.Encoder(self._encode_other)
        return wire.digest(encoder.encode(value), encoder.blobs)

    def _decode_handle(self, tag: dict[str, Any]) -> Remote:
        number = tag.get("h")
        if type(number) is not int:
            raise wire.ProtocolError("a handle without a number")
        type_name = tag.get("type", "object")
        return Remote(self, number, type_name[:100] if type(type_name) is str else "object")


class Stopwatch:
    """One timed window of a program: ``wall_s``, the seconds of its exchanges on the judge's
    clock, and ``cpu_s``, the CPU time of every one of its tasks meanwhile, plus the time its
    exchanges took that neither the task serving the calls nor the judge spent on a CPU or waiting for one
    (None where the sandbox shows no per-task CPU, or when the window cannot be trusted: a
    task was born or ended inside it, whose time would escape the count, and no cgroup counts
    the CPU of every task of the program, those that ended included).

    Waiting is the program's own time: a call that sleeps, or blocks on anything but a CPU,
    is that much slower, and a CPU clock alone would call it fast (the red team's sleeping
    work(), 25x the baseline's wall time, passed at 0.08x). What load adds is time spent
    runnable, waiting for a CPU, which the kernel counts per task (schedstat's run delay):
    the serving task's, and the judge's own share of the exchanges, is left out, so a busy
    machine cannot inflate a call's count (``window_time_ns`` says why no other task's).

    ``ticks_cpu_s`` is the CPU its processes used meanwhile as /proc/<pid>/stat counts it (their
    threads, ended ones included, and the children they reaped), in clock ticks: too coarse to
    time a call, but pooled over a case's windows it says how far the wall clock, where that
    decides (gVisor shows nothing finer), falls short of the CPU that tasks working side by
    side use (stats.CpuBeyondWall)."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self.wall_s = 0.0
        self.cpu_s: float | None = None
        self.ticks_cpu_s = 0.0

    def _pids(self) -> list[int]:
        family = self.program.family
        return family.pids() if family is not None else [self.program.process.pid]

    def _cgroup_cpu_ns(self) -> int | None:
        family = self.program.family
        return family.cgroup.cpu_usage_ns() if family is not None and family.cgroup is not None else None

    def __enter__(self) -> Stopwatch:
        self.program._watched = 0.0
        self.program._judged_ns = 0
        self._last_pid = _last_pid()
        pids = self._pids()
        self._before = _task_schedstat(pids)
        self._ticks_before = _process_ticks(pids)
        self._cgroup_before = self._cgroup_cpu_ns()
        return self

    def __exit__(self, *exc: object) -> None:
        pids = self._pids()
        cgroup_after = self._cgroup_cpu_ns()
        after = _task_schedstat(pids)
        ticks_after = _process_ticks(pids)
        self.wall_s = self.program._watched or 0.0
        self.program._watched = None
        self.ticks_cpu_s = _ticks_spent(self._ticks_before, ticks_after) / _CLOCK_TICKS_PER_S
        before, cgroup_before = self._before, self._cgroup_before
        if before is None or after is None:
            return
        counted_ns = cgroup_after - cgroup_before if cgroup_before is not None and cgroup_after is not None else None
        born = _last_pid() != self._last_pid or self._last_pid is None
        if counted_ns is None and born:
            return  # a task born and ended inside would escape the per-task count
        # Only the judge's CPU and run delay inside the exchanges, the seconds ``wall_s`` counts:
        # its work around them (encoding arguments, thawing, reading /proc for every student
        # task) is not in that wall time, and taking it off hid a sleeping call 3.3x the
        # baseline's behind 60 idle processes (red team round 9).
        charged_ns = window_time_ns(
            self.wall_s * 1e9, before, after, self.program._judged_ns, counted_ns, self.program.process.pid)
        self.cpu_s = None if charged_ns is None else charged_ns / 1e9


def window_time_ns(
    wall_ns: float, before: dict[int, tuple[int, int]], after: dict[int, tuple[int, int]], judge_ns: int,
    counted_ns: int | None, caller: int,
) -> float | None:
    """A window's time: the CPU its tasks used, plus the wall time that neither the task that
    serves the call (``caller``) nor the judge spent on a CPU or runnable waiting for one.
    ``before`` and ``after`` are each task's (CPU, run delay) in nanoseconds at the window's
    ends; ``counted_ns`` is the CPU its cgroup counted meanwhile, which covers tasks born and
    ended inside (None where there is none: then a task that ended makes the window
    untrustworthy, and so None).

    The count is never less than that CPU, whatever the wall clock says: work split across tasks
    that run side by side is all counted. Only the caller's run delay is left out, never the
    sum over tasks: tasks waiting for a CPU at the same moment would each count that moment,
    and a student that wakes many helpers at once made their queue (N^2/4 slivers) hide a
    sleeping call 16x the baseline's wall time (red team round 8). One task's waiting spans
    distinct moments, none of which the caller spent asleep. Load that delays other tasks
    only, while the caller waits for them, counts against the program: more, never less."""
    if counted_ns is None and not before.keys() <= after.keys():
        return None
    cpu_ns = queued_ns = 0
    for task, (cpu_after, queued_after) in after.items():
        cpu_before, queued_before = before.get(task, (0, 0))
        if cpu_after < cpu_before or queued_after < queued_before:
            cpu_before = queued_before = 0  # a reused task id: a task born inside the window
        cpu_ns += cpu_after - cpu_before
        if task == caller:
            queued_ns = queued_after - queued_before
    if counted_ns is not None:
        cpu_ns = max(cpu_ns, counted_ns)
    waited_ns = wall_ns - cpu_ns - queued_ns - judge_ns
    return cpu_ns + max(0.0, waited_ns)


_CLOCK_TICKS_PER_S = os.sysconf("SC_CLK_TCK")


def _process_ticks(pids: Sequence[int]) -> dict[int, int]:
    """Clock ticks of CPU per process, from /proc/<pid>/stat: its threads (ended ones
    included) and the children it reaped, user and system time."""
    found: dict[int, int] = {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as file:
                stat = file.read()
            fields = stat[stat.rfind(b")") + 2 :].split()
            found[pid] = sum(int(fields[i]) for i in (11, 12, 13, 14))  # utime stime cutime cstime
        except (OSError, ValueError, IndexError):
            continue
    return found


def _ticks_spent(before: dict[int, int], after: dict[int, int]) -> int:
    """Ticks used between two readings: a process born in between counts all of its own."""
    spent = 0
    for pid, ticks in after.items():
        earlier = before.get(pid, 0)
        spent += ticks - earlier if ticks >= earlier else ticks
    return spent


def _last_pid() -> int | None:
    """The pid namespace's last allocated pid: it moves whenever any task is born."""
    try:
        with open("/proc/sys/kernel/ns_last_pid") as file:
            return int(file.read())
    except (OSError, ValueError):
        return None


def cpu_clock_available() -> bool:
    """Whether this sandbox shows per-task CPU time (gVisor shows neither schedstat nor ns_last_pid)."""
    return _last_pid() is not None and _task_schedstat([os.getpid()]) is not None


def _task_schedstat(pids: Sequence[int]) -> dict[int, tuple[int, int]] | None:
    """(nanoseconds on a CPU, nanoseconds runnable but waiting for one) of every task of
    ``pids``, read by the judge from /proc; None where this sandbox shows no schedstat."""
    found: dict[int, tuple[int, int]] = {}
    for pid in pids:
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue  # gone already: its tasks are missing from the count, which the window then refuses
        for task in tasks:
            try:
                with open(f"/proc/{pid}/task/{task}/schedstat") as file:
                    fields = file.read().split()
                found[int(task)] = (int(fields[0]), int(fields[1]))
            except FileNotFoundError:
                if not os.path.exists(f"/proc/{pid}/task/{task}/stat"):
                    continue
                return None  # the task is there, its schedstat is not: no per-task CPU in this sandbox
            except (OSError, ValueError, IndexError):
                continue
    return found


def _own_schedstat() -> tuple[int, int] | None:
    """The judge's own thread: (nanoseconds on a CPU, nanoseconds waiting for one)."""
    try:
        with open("/proc/thread-self/schedstat") as file:
            fields = file.read().split()
        return int(fields[0]), int(fields[1])
    except (OSError, ValueError, IndexError):
        return None


def _valid_reply(reply: Any, blob_count: int, digests: int | None) -> bool:
    """Every field a reply may have, with its declared type (and size) before any use."""
    if type(reply) is not dict or type(reply.get("ok")) is not bool:
        return False
    if not reply["ok"]:
        error = reply.get("error")
        return (
            type(error) is dict
            and all(type(error.get(k)) is str for k in ("type", "message", "traceback"))
            and (error.get("line") is None or type(error.get("line")) is int)
            and (error.get("errno") is None or type(error.get("errno")) is int)
            and type(reply.get("syntax", False)) is bool
        )
    if digests is not None:
        found = reply.get("digests")
        if type(found) is not list or len(found) != digests or not all(type(d) is str and len(d) == 64 for d in found):
            return False
    return True


class Remote:
    """An object living in a program: attributes and calls go there, plain data comes back."""

    is_remote_object = True

    def __init__(self, program: Program, number: int, type_name: str = "module"):
        self._program = program
        self._number = number
        self._type_name = type_name

    def __getattr__(self, name: str) -> RemoteAttribute:
        if name.startswith("__"):
            raise AttributeError(name)
        return RemoteAttribute(self, name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._program.call(self._number, None, args, kwargs)

    def __repr__(self) -> str:
        where = "your program" if self._program.side == "student" else f"the {self._program.side} program"
        return f"<{self._type_name} object in {where}>"


class RemoteAttribute:
    """``obj.name`` in a program: call it, or ``.get()`` its value."""

    is_remote_object = True

    def __init__(self, owner: Remote, name: str):
        self.owner = owner
        self.name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.owner._program.call(self.owner._number, self.name, args, kwargs)

    def get(self) -> Any:
        return self.owner._program.call(self.owner._number, self.name, (), {}, invoke=False)

    def timed(self, *args: Any, timeout: float) -> tuple[Any, float]:
        return self.owner._program.timed_call(self.owner._number, self.name, args, {}, timeout=timeout)

    @property
    def program(self) -> Program:
        return self.owner._program

    def __repr__(self) -> str:
        return f"<{self.name} of {self.owner!r}>"
