"""The judge's side of a worker: a process it starts, calls into, times, freezes and kills.

The student's program runs as uid 65534 with no capabilities (when the judge is root inside
the sandbox), in its own folder, with its own rlimits. The judge keeps the clock, the
hidden files and the result channel; the student can only answer requests.
"""
from __future__ import annotations

import ctypes
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from grader import contract
from grader.harness import wire
from grader.harness.api import CheckFailed, ProgramError, ProgramStopped

STUDENT_UID = STUDENT_GID = 65534  # "nobody": owns nothing the judge needs
FILE_SIZE_LIMIT = 16 * 2**20  # any file the student writes, stdout and stderr included
_BOOT = "import sys; sys.path.insert(0, sys.argv[1]); from grader.harness.worker import main; main()"
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_CHILD_SUBREAPER = 36



def privileged() -> bool:
    """True when the judge starts the student under another uid: root in a real sandbox.

    In unisolated development mode the host says so, and the judge runs the student under
    its own uid (and the verdict says so) instead of failing on a machine without bwrap.
    """
    return os.geteuid() == 0 and os.environ.get(contract.UNISOLATED_ENV) != "1"


def become_subreaper() -> None:
    """Orphans of the student's processes come back to the judge, so it can find and stop them."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


class _Deadline:
    def __init__(self, seconds: float):
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        return self.end - time.monotonic()


class _Reader:
    """Blocking reads from a pipe that give up at a deadline."""

    def __init__(self, fd: int):
        self.fd = fd
        self.deadline = _Deadline(1e9)

    def read(self, size: int) -> bytes:
        left = self.deadline.left()
        if left <= 0 or not select.select([self.fd], [], [], left)[0]:
            raise TimeoutError
        return os.read(self.fd, min(size, 1 << 20))


class Process:
    """One worker process and its pipes."""

    def __init__(
        self,
        side: str,
        program: Path,
        *,
        lib: Path,
        cwd: Path,
        env: dict[str, str],
        as_student: bool,
        rlimits: dict[int, int],
        stdout: Path,
        stderr: Path,
    ):
        self.side, self.program, self.lib, self.cwd, self.env = side, program, lib, cwd, env
        self.as_student, self.rlimits = as_student, rlimits
        self.stdout_path, self.stderr_path = stdout, stderr
        self.popen: subprocess.Popen[bytes] | None = None
        self.status: tuple[int, Any] | None = None  # (wait status, rusage) once reaped

    def start(self) -> None:
        request_read, self.request_write = os.pipe()
        self.reply_read, reply_write = os.pipe()
        out = os.open(self.stdout_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        err = os.open(self.stderr_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        drop = self.as_student and privileged()
        try:
            self.popen = subprocess.Popen(
                [sys.executable, "-I", "-c", _BOOT, str(self.lib), str(request_read), str(reply_write)],
                pass_fds=(request_read, reply_write),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                cwd=self.cwd,
                env=self.env,
                start_new_session=True,
                preexec_fn=lambda: self._limit_self(drop),
            )
        except PermissionError as error:
            raise RuntimeError(
                f"the {self.side} worker could not start ({error}): the sandbox must let uid "
                f"{STUDENT_UID} search and read the Python installation at {sys.executable}"
            ) from None
        finally:
            for fd in (request_read, reply_write, out, err):
                os.close(fd)
        self.status = None
        self.reader = _Reader(self.reply_read)
        os.set_blocking(self.request_write, False)

    def _limit_self(self, drop: bool) -> None:
        """Runs in the new process before the interpreter starts: limits, then the uid switch."""
        import resource

        if self.as_student:
            with open("/proc/self/oom_score_adj", "w") as file:  # the OOM killer takes the student first
                file.write("1000")
        for which, value in self.rlimits.items():
            hard = value + 1 if which == resource.RLIMIT_CPU else value  # SIGXCPU first, SIGKILL after
            resource.setrlimit(which, (value, hard))
        if drop:
            # All three uids non-zero: the kernel clears every capability, for good.
            os.setgroups([])
            os.setresgid(STUDENT_GID, STUDENT_GID, STUDENT_GID)
            os.setresuid(STUDENT_UID, STUDENT_UID, STUDENT_UID)
        if self.as_student:
            ctypes.CDLL(None).prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)

    @property
    def pid(self) -> int:
        return self.popen.pid if self.popen else -1

    @property
    def alive(self) -> bool:
        return self.popen is not None and self.status is None

    def exchange(self, header: dict[str, Any], blobs: list[bytes], timeout: float) -> tuple[dict[str, Any], list[bytes], float]:
        """Send one request and wait for its reply; returns (reply, blobs, seconds elapsed)."""
        data = wire.frame_bytes(header, blobs)
        deadline = _Deadline(timeout)
        self.reader.deadline = deadline
        start = time.perf_counter()
        self._write_all(data, deadline)
        reply, reply_blobs = wire.read_frame(self.reader)
        elapsed = time.perf_counter() - start
        return reply, reply_blobs, elapsed

    def _write_all(self, data: bytes, deadline: _Deadline) -> None:
        view = memoryview(data)
        while view:
            left = deadline.left()
            if left <= 0 or not select.select([], [self.request_write], [], left)[1]:
                raise TimeoutError
            try:
                written = os.write(self.request_write, view[: 1 << 20])
            except BlockingIOError:
                continue
            view = view[written:]

    def reap(self, wait: float = 2.0) -> tuple[int, Any] | None:
        """The process's exit status and usage, waiting up to ``wait`` seconds for it to end."""
        if self.status is None and self.popen is not None:
            deadline = _Deadline(wait)
            while True:
                pid, status, usage = os.wait4(self.popen.pid, os.WNOHANG)
                if pid:
                    self.status = (status, usage)
                    self.popen.returncode = os.waitstatus_to_exitcode(status)
                    break
                if deadline.left() <= 0:
                    return None
                time.sleep(0.01)
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
    """The student's processes: the worker and everything it started, found via /proc.

    The judge is a child subreaper, so even a double-forked daemon of the student stays in
    the judge's subtree. Signals go out with the student's uid as effective uid: the judge
    holds no CAP_KILL, and needs none.
    """

    def __init__(self, judge_pid: int, trusted: Callable[[], set[int]], workers: Callable[[], set[int]]):
        self.judge_pid = judge_pid
        self.trusted = trusted  # pids of trusted workers, whose subtrees are not the student's
        self.workers = workers  # pids the judge reaps itself, to read their exit status

    def pids(self) -> list[int]:
        children: dict[int, list[int]] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", "rb") as file:
                    stat = file.read()
            except OSError:
                continue
            fields = stat[stat.rfind(b")") + 2 :].split()
            pid, state, ppid = int(entry), fields[0], int(fields[1])
            if state == b"Z" and ppid == self.judge_pid:
                self._reap_orphan(pid)
                continue
            children.setdefault(ppid, []).append(pid)
        trusted = self.trusted()
        found, todo = [], [p for p in children.get(self.judge_pid, []) if p not in trusted]
        while todo:
            pid = todo.pop()
            found.append(pid)
            todo.extend(children.get(pid, []))
        return found

    def _reap_orphan(self, pid: int) -> None:
        if pid in self.workers():
            return
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass

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

    def freeze(self) -> None:
        self.signal_all(signal.SIGSTOP)

    def thaw(self) -> None:
        self.signal_all(signal.SIGCONT)

    def kill(self) -> None:
        self.signal_all(signal.SIGKILL)


class _as_student:
    """Effective uid of the student while signalling it; back to root afterwards."""

    def __enter__(self) -> None:
        self.switched = privileged()
        if self.switched:
            os.seteuid(STUDENT_UID)

    def __exit__(self, *exc: Any) -> None:
        if self.switched:
            os.seteuid(0)


class Program:
    """One side (student or reference) as the checks see it: calls in, plain data out."""

    def __init__(self, side: str, process: Process, family: Family | None):
        self.side = side
        self.process = process
        self.family = family
        self.loaded = False
        self.load_error: BaseException | None = None
        self.budget_s = float("inf")  # seconds of calls left; the judge sets it per phase
        self.check_mutation = side == "student"

    # -- lifecycle --

    def start(self, timeout: float) -> None:
        """Start the worker and load the program; raises ProgramError / ProgramStopped."""
        self.process.start()
        self.loaded = False
        reply, _, elapsed = self._exchange({"op": "load", "path": str(self.process.program), "module": self.module_name}, [], timeout)
        self.budget_s -= elapsed
        if not reply.get("ok"):
            raise self._error(reply, syntax=bool(reply.get("syntax")))
        self.loaded = True

    @property
    def module_name(self) -> str:
        return "submission" if self.side == "student" else "solution"

    def ensure_started(self) -> None:
        if not self.process.alive or not self.loaded:
            self.stop()
            self.start(self.call_timeout())

    def stop(self) -> None:
        if self.process.popen is None:
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
            raise ProgramStopped(self.side, "TIME_LIMIT", "the time limit was used up by earlier checks")
        return self.budget_s

    # -- calls --

    def call(self, number: int, name: str | None, args: tuple[Any, ...], kwargs: dict[str, Any], *, invoke: bool = True) -> Any:
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
        reply, blobs, elapsed = self._exchange(header, encoder.blobs, limit)
        if timeout is None:
            self.budget_s -= elapsed
        if not reply.get("ok"):
            raise self._error(reply)
        if self.check_mutation and reply.get("digests") != sent:
            changed = [i + 1 for i, (a, b) in enumerate(zip(sent, reply.get("digests") or [])) if a != b] or ["?"]
            raise CheckFailed(f"your code changed its input (argument {changed[0]}) in place; leave the inputs untouched")
        decoder = wire.Decoder(blobs, handle=self._decode_handle)
        try:
            return decoder.decode(reply.get("value")), elapsed
        except wire.ProtocolError as error:
            self.stop()
            raise ProgramStopped(self.side, "RUNTIME_ERROR", f"the judge could not read what your code returned: {error}") from None

    def peak_memory_bytes(self) -> int:
        """The worker's peak resident memory so far, read by the judge from /proc (unforgeable)."""
        try:
            with open(f"/proc/{self.process.pid}/status") as status:
                for line in status:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) * 1024
        except OSError:
            pass
        return 0

    def _exchange(self, header: dict[str, Any], blobs: list[bytes], timeout: float) -> tuple[dict[str, Any], list[bytes], float]:
        try:
            reply, reply_blobs, elapsed = self.process.exchange(header, blobs, timeout)
        except TimeoutError:
            self.stop()
            self.budget_s = 0 if self.budget_s != float("inf") else self.budget_s
            raise ProgramStopped(self.side, "TIME_LIMIT", f"no answer within {timeout:.1f} s (time limit)") from None
        except (EOFError, BrokenPipeError):
            raise self._died() from None
        except wire.ProtocolError as error:
            self.stop()
            raise ProgramStopped(self.side, "RUNTIME_ERROR", f"the judge could not read the reply ({error})") from None
        if not isinstance(reply, dict):
            self.stop()
            raise ProgramStopped(self.side, "RUNTIME_ERROR", "the reply was not a message")
        return reply, reply_blobs, elapsed

    def _died(self) -> ProgramStopped:
        """Why the worker went away, from its wait status and the limits it ran under."""
        import resource

        status = self.process.reap()
        self.stop()
        if status is None:
            return ProgramStopped(self.side, "RUNTIME_ERROR", "your program closed the judge's channel")
        wait_status, usage = status
        cpu = usage.ru_utime + usage.ru_stime
        if os.WIFSIGNALED(wait_status):
            signum = os.WTERMSIG(wait_status)
            cpu_limit = self.process.rlimits.get(resource.RLIMIT_CPU)
            memory_limit = self.process.rlimits.get(resource.RLIMIT_DATA)
            if signum == signal.SIGXCPU or (cpu_limit and cpu >= cpu_limit - 0.5 and signum == signal.SIGKILL):
                return ProgramStopped(self.side, "TIME_LIMIT", f"CPU time limit reached ({cpu:.1f} s)")
            if signum == signal.SIGXFSZ:
                return ProgramStopped(self.side, "OUTPUT_LIMIT", "your program wrote more output than allowed")
            if signum == signal.SIGKILL and memory_limit and usage.ru_maxrss * 1024 >= 0.8 * memory_limit:
                return ProgramStopped(self.side, "MEMORY_LIMIT", f"memory limit reached ({usage.ru_maxrss // 1024} MB)")
            name = signal.Signals(signum).name if signum in signal.Signals._value2member_map_ else str(signum)
            return ProgramStopped(self.side, "RUNTIME_ERROR", f"your program was killed by {name}")
        code = os.WEXITSTATUS(wait_status)
        return ProgramStopped(self.side, "RUNTIME_ERROR", f"your program exited (status {code}) in the middle of a check")

    def _error(self, reply: dict[str, Any], syntax: bool = False) -> ProgramError:
        error = reply.get("error") if isinstance(reply.get("error"), dict) else {}
        line = error.get("line")
        result = ProgramError(
            self.side,
            "SyntaxError" if syntax else str(error.get("type", "Error"))[:100],
            str(error.get("message", ""))[:2000],
            str(error.get("traceback", ""))[:8000],
            line if type(line) is int else None,
        )
        result.syntax = syntax
        return result

    # -- values --

    def _encode_other(self, value: Any, encoder: wire.Encoder) -> Any:
        if isinstance(value, wire.Fn):
            return {"$": "fn", "src": value.source}
        if isinstance(value, Remote):
            if value._program is not self:
                raise TypeError(f"an object from the {value._program.side} program cannot be passed to the {self.side} program")
            return {"$": "handle", "h": value._number}
        raise TypeError(f"cannot send a {type(value).__name__} to a program; send plain data, arrays, tensors or fn(...)")

    def _fingerprint(self, value: Any) -> str:
        encoder = wire.Encoder(self._encode_other)
        return wire.digest(encoder.encode(value), encoder.blobs)

    def _decode_handle(self, tag: dict[str, Any]) -> Remote:
        number = tag.get("h")
        if type(number) is not int:
            raise wire.ProtocolError("a handle without a number")
        return Remote(self, number, str(tag.get("type", "object"))[:100])


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
