"""The trusted first process inside every sandbox (standard library only).

It runs as PID 1 of the sandbox's PID namespace (bubblewrap ``--as-pid-1``, Docker with
this file as the entrypoint), which is what makes it hard to kill from inside: the kernel
drops every signal that PID 1 has no handler for, SIGKILL and SIGSTOP included, when
it comes from inside the namespace. So ``kill(-1)``, ``kill(getppid())`` and SIGSTOP
cannot take the supervisor down, and the host always gets a report.

Protocol, over stdin/stdout (nothing else is shared with the host; the bytes are framed by
framing.py, which the host installs, with zygote.py, ahead of this file in the one script
a sandbox runs):

1. optionally pre-imports modules (numpy and torch, for a grading or the warm pool), forks
   the zygote (zygote.py) that will fork the judge's workers, then writes READY;
2. reads one job: ``u32 length + JSON {argv, env, limits...}`` then ``u64 length + tar``;
3. unpacks the tar into the work folder (files root-owned 0600, folders 0700, ``out/``
   created 0700), runs argv in a child whose stdout/stderr it reads through pipes,
   keeping at most ``output_bytes`` of each and killing everything once a stream
   overflows, the CPU time of all processes together passes ``cpu_s`` or the wall
   clock passes ``wall_s``;
4. when the program ends it kills whatever the program left behind (daemons included),
   packs ``out/`` (regular files only, links never followed, size-capped) and writes
   ``u32 length + JSON report`` then the stdout, stderr and tar bytes the report sizes.

A ``python3 -c CODE``, ``python3 -m MODULE`` or ``python3 SCRIPT`` job runs in a fork of this
interpreter, so what was preloaded costs nothing; anything else is exec-ed.

Who the program is. Every program is untrusted unless its job says ``"trusted": true``:
it runs as the uid the host lent (``CHILD_UID_ENV``), with no capabilities, no way back,
the syscall filter, and a home of its own (zygote.py ``confine``); its files and ``out/``
are its own. A trusted program (the judge) keeps root inside the sandbox, is never
dumpable, gets the socket to the zygote as descriptor 3 and the run's secret, which only
it receives, on a pipe at descriptor 4 (read it, then close it), and the checkpoint channel at
descriptor 5: what it hands over there (framing.py ``hand_checkpoint``) is passed on to the host
before the bootstrap answers, so the host holds it even if the sandbox dies right after.

As PID 1 the bootstrap first makes /tmp writable by root alone: each family's home is
made there by a trusted process (zygote.py ``make_home``), and no untrusted process can
plant anything where another family would look.
"""
import ctypes
import io
import os
import resource
import selectors
import signal
import socket
import stat
import sys
import tarfile
import time
from typing import IO, cast

from sandbox.framing import (
    CHECKPOINT_FD,
    CHECKPOINT_FD_ENV,
    CHECKPOINT_FRAME,
    CHECKPOINT_MAX_BYTES,
    CHECKPOINT_REFUSED,
    CHECKPOINT_TAKEN,
    CHECKPOINTS_MAX_BYTES,
    CHILD_UID_ENV,
    OUTPUT_DIR,
    PRELOADED_ENV,
    READY,
    SECRET_FD,
    SECRET_FD_ENV,
    ZYGOTE_FD,
    ZYGOTE_FD_ENV,
    Job,
    Report,
    pack_checkpoint,
    pack_report,
    read_job,
)
from sandbox.zygote import (
    ROOTS,
    confine,
    drop_namespace_capabilities,
    fork_in_own_pid_namespace,
    fork_zygote,
    home_env,
    lent_uid,
    make_home,
    mount_own_proc,
    own_pid_namespaces,
    python_tail,
    run_python,
)

PIPE_CHUNK = 65536
POLL_S = 0.05
PR_SET_DUMPABLE = 4
RUSAGE_CHILDREN = resource.RUSAGE_CHILDREN
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _prctl(option: int, value: int) -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _read_exact(fd: int, n: int) -> bytes:
    chunks, remaining = [], n
    while remaining:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            raise EOFError("stdin closed before the job was complete")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def unpack_files(tar_bytes: bytes, workdir: str) -> None:
    """Write the job's files owned by root, 0600 (folders 0700): the judge's child cannot read them."""
    os.makedirs(workdir, mode=0o700, exist_ok=True)
    os.chmod(workdir, 0o700)
    with tarfile.open(fileobj=io.BytesIO(tar_bytes), mode="r:") as archive:
        for member in archive:
            parts = [p for p in member.name.split("/") if p not in ("", ".")]
            if not parts or ".." in parts:
                continue
            path = os.path.join(workdir, *parts)
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
            if member.isdir():
                os.makedirs(path, mode=0o700, exist_ok=True)
            elif member.isfile():
                data = cast(IO[bytes], archive.extractfile(member)).read()  # a file member has a reader
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
                try:
                    _write_all(fd, data)
                finally:
                    os.close(fd)
    out = os.path.join(workdir, OUTPUT_DIR)
    os.makedirs(out, mode=0o700, exist_ok=True)
    os.chmod(out, 0o700)


def pack_outputs(out_dir: str, cap: int) -> tuple[bytes, bool, list[str]]:
    """Tar the regular files under out_dir, never following links, at most ``cap`` bytes of content."""
    buffer, truncated, notes, used = io.BytesIO(), False, [], 0
    try:
        is_folder = stat.S_ISDIR(os.lstat(out_dir).st_mode)  # a link put in its place is never followed
    except OSError:
        is_folder = False
    with tarfile.open(fileobj=buffer, mode="w:") as archive:
        stack = [""] if is_folder else []
        while stack:
            rel = stack.pop()
            try:
                names = sorted(os.listdir(os.path.join(out_dir, rel) if rel else out_dir))
            except OSError:
                continue
            for name in names:
                rel_path = f"{rel}/{name}" if rel else name
                full = os.path.join(out_dir, rel_path)
                try:
                    info = os.lstat(full)
                except OSError:
                    continue
                if stat.S_ISDIR(info.st_mode):
                    stack.append(rel_path)
                elif stat.S_ISREG(info.st_mode):
                    room = cap - used
                    if info.st_size > room:
                        truncated = True
                        notes.append(f"output file {rel_path} left out: over the files limit")
                        continue
                    try:
                        fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
                    except OSError:
                        continue
                    try:
                        data = os.read(fd, room + 1)
                    finally:
                        os.close(fd)
                    if len(data) > room:
                        truncated = True
                        continue
                    used += len(data)
                    entry = tarfile.TarInfo(rel_path)
                    entry.size, entry.mode = len(data), 0o644
                    archive.addfile(entry, io.BytesIO(data))
                else:
                    notes.append(f"output {rel_path} left out: not a regular file")
    return buffer.getvalue(), truncated, notes


def _live_cpu_s(session: int | None) -> float:
    """CPU of the program's live processes, with what they already reaped.

    As PID 1 that is every other process in the namespace; otherwise (unisolated) the
    processes still in the program's session.
    """
    total = 0
    me = os.getpid()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            if session is not None and int(fields[3]) != session:
                continue
            total += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
        except (OSError, IndexError, ValueError):
            continue
    return total / CLOCK_TICKS


def _cgroup_memory() -> tuple[int, int]:
    """(peak bytes, OOM kills) of this sandbox's memory cgroup when it is visible here."""
    peak = oom_kills = 0
    for peak_file, events_file in (
        ("/sys/fs/cgroup/memory/memory.max_usage_in_bytes", "/sys/fs/cgroup/memory/memory.oom_control"),
        ("/sys/fs/cgroup/memory.peak", "/sys/fs/cgroup/memory.events"),
    ):
        try:
            with open(peak_file) as f:
                peak = max(peak, int(f.read().strip()))
            with open(events_file) as f:
                for line in f:
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        oom_kills = max(oom_kills, int(value))
        except (OSError, ValueError):
            continue
    return peak, oom_kills


def _child_env(job_env: dict[str, str]) -> dict[str, str]:
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8",
           "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1", "TMPDIR": "/tmp"}
    env.update(job_env)
    return env


def untrusted_uid(job: Job) -> int | None:
    """The uid an untrusted program runs as: the lent one, inside a real sandbox (as root)."""
    if job.get("trusted") or os.geteuid() != 0:
        return None
    return lent_uid(CHILD_UID_ENV, job.get("env") or {})


def give_tree(top: str, uid: int) -> None:
    """Hand the job's files to the program's uid (it is their only reader), links never followed.

    Bottom up: root here holds no CAP_DAC_OVERRIDE, so a folder already handed over (0700)
    could not be entered to hand over what is inside it."""
    for folder, subfolders, names in os.walk(top, topdown=False):
        for name in (*names, *subfolders):
            os.chown(os.path.join(folder, name), uid, uid, follow_symlinks=False)
    os.chown(top, uid, uid, follow_symlinks=False)


def start_child(
    job: Job, workdir: str, out_w: int, err_w: int, zygote: socket.socket | None
) -> tuple[int, socket.socket | None]:
    """Start the program; its pid, and for a trusted program this end of its checkpoint channel."""
    argv = list(job["argv"])
    limits = job["limits"]
    trusted = bool(job.get("trusted"))
    uid = untrusted_uid(job)
    secret_r = secret_w = -1
    checkpoints = program_end = None
    if trusted:
        secret_r, secret_w = os.pipe()
        checkpoints, program_end = socket.socketpair()
    # An untrusted program sees a /proc of its own where the sandbox can give one (zygote.py):
    # neither this bootstrap nor the zygote is there to name.
    namespaces = own_pid_namespaces()  # here, in PID 1: the child's pid is not 1
    own_namespace = uid is not None and namespaces
    pid = fork_in_own_pid_namespace() if own_namespace else os.fork()
    if pid:
        if trusted:
            os.close(secret_r)
            _write_all(secret_w, bytes.fromhex(job.get("secret") or ""))
            os.close(secret_w)
            cast(socket.socket, program_end).close()
        return pid, checkpoints
    try:
        os.setsid()
        if own_namespace:
            mount_own_proc(os.path.join(ROOTS, "program"))
        else:
            drop_namespace_capabilities()  # the judge: only the bootstrap and the zygote make namespaces
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        env = _child_env(job.get("env") or {})
        env[PRELOADED_ENV] = ",".join(PRELOADED)
        first_free = 3
        if zygote is not None:
            fd = zygote.detach()  # closed below unless lent: the object must never close a reused number
            if trusted:  # the judge's end of the zygote's socket
                os.dup2(fd, ZYGOTE_FD)
                env[ZYGOTE_FD_ENV] = str(ZYGOTE_FD)
        if trusted:
            os.close(secret_w)
            os.dup2(secret_r, SECRET_FD)
            env[SECRET_FD_ENV] = str(SECRET_FD)
            os.dup2(cast(socket.socket, program_end).fileno(), CHECKPOINT_FD)
            env[CHECKPOINT_FD_ENV] = str(CHECKPOINT_FD)
            first_free = CHECKPOINT_FD + 1
        os.closerange(first_free, 1024)
        for sig in (signal.SIGPIPE, signal.SIGINT, signal.SIGTERM, signal.SIGCHLD, signal.SIGXFSZ):
            signal.signal(sig, signal.SIG_DFL)
        if uid is not None:
            give_tree(workdir, uid)
            env.update(home_env(make_home(uid, "program"), "program"))
        os.umask(0o022)
        if not trusted:
            _prctl(PR_SET_DUMPABLE, 1)
        try:
            with open("/proc/self/oom_score_adj", "w") as f:
                f.write("1000")  # the program, not its supervisor, is what the OOM killer takes
        except OSError:
            pass
        cpu = int(limits["cpu_s"]) + 1
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if limits.get("file_bytes"):
            resource.setrlimit(resource.RLIMIT_FSIZE, (limits["file_bytes"],) * 2)
        if limits.get("address_space_bytes"):  # only where no memory cgroup exists
            resource.setrlimit(resource.RLIMIT_AS, (limits["address_space_bytes"],) * 2)
        if limits.get("nproc"):
            resource.setrlimit(resource.RLIMIT_NPROC, (limits["nproc"],) * 2)
        if uid is not None:
            confine(uid)
        os.chdir(workdir)  # after confine: root here cannot enter a folder it handed to the program
        tail = python_tail(argv)
        if tail is not None:  # in this interpreter, its preloaded modules included
            os.environ.clear()
            os.environ.update(env)
            run_python(tail)
        if argv and argv[0] == "python3":
            argv[0] = sys.executable
        os.execvpe(argv[0], argv, env)
    except BaseException as error:  # report why the program could not start, as its stderr
        try:
            os.write(2, f"sandbox: cannot start {argv[:1]}: {error}\n".encode())
        except OSError:
            pass
    os._exit(127)


def _kill_everything(child: int, is_init: bool) -> None:
    if is_init:
        try:
            os.kill(-1, signal.SIGKILL)  # as PID 1: everything in the sandbox but us
        except ProcessLookupError:
            pass
    else:
        try:
            os.killpg(child, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


class Checkpoints:
    """The bootstrap's end of a trusted program's checkpoint channel: each checkpoint whole is
    written to the host (stdout, blocking) before the program hears CHECKPOINT_TAKEN, so the
    host has it before the program goes on. At most CHECKPOINTS_MAX_BYTES per run."""

    def __init__(self, channel: socket.socket):
        self.channel = channel
        channel.setblocking(False)
        self.buffer = bytearray()
        self.sent = 0

    def fileno(self) -> int:
        return self.channel.fileno()

    def read(self) -> bool:
        """Take what the program sent; False once the channel is closed (then this is done)."""
        try:
            chunk = self.channel.recv(PIPE_CHUNK)
        except BlockingIOError:
            return True
        except OSError:
            chunk = b""
        if not chunk:
            return False
        self.buffer += chunk
        while len(self.buffer) >= 4:
            size = int.from_bytes(self.buffer[:4], "big")
            if size > CHECKPOINT_MAX_BYTES:
                self._answer(CHECKPOINT_REFUSED)
                return False  # no way to find the next frame: the program learns it was refused
            if len(self.buffer) < 4 + size:
                break
            payload = bytes(self.buffer[4:4 + size])
            del self.buffer[:4 + size]
            if self.sent + CHECKPOINT_FRAME + size > CHECKPOINTS_MAX_BYTES:
                self._answer(CHECKPOINT_REFUSED)
                continue
            _write_all(1, pack_checkpoint(payload))
            self.sent += CHECKPOINT_FRAME + size
            self._answer(CHECKPOINT_TAKEN)
        return True

    def _answer(self, answer: bytes) -> None:
        try:
            self.channel.setblocking(True)
            self.channel.sendall(answer)
        except OSError:
            pass
        finally:
            self.channel.setblocking(False)

    def close(self) -> None:
        self.channel.close()


def supervise(job: Job, zygote: socket.socket | None) -> tuple[Report, bytes, bytes, bytes]:
    limits = job["limits"]
    workdir = job["workdir"]
    is_init = os.getpid() == 1
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    started = time.monotonic()
    child, channel = start_child(job, workdir, out_w, err_w, zygote)
    checkpoints = Checkpoints(channel) if channel is not None else None
    os.close(out_w)
    os.close(err_w)
    if zygote is not None:
        zygote.close()  # the program holds the only end now: when it exits, so does the zygote

    cap = int(limits["output_bytes"])
    kept = {out_r: bytearray(), err_r: bytearray()}
    seen = {out_r: 0, err_r: 0}
    selector = selectors.DefaultSelector()
    for fd in kept:
        os.set_blocking(fd, False)
        selector.register(fd, selectors.EVENT_READ)
    if checkpoints is not None:
        selector.register(checkpoints.fileno(), selectors.EVENT_READ)

    def stop_checkpoints() -> None:
        nonlocal checkpoints
        if checkpoints is not None:
            selector.unregister(checkpoints.fileno())
            checkpoints.close()
            checkpoints = None

    stopped_by: str | None = None
    child_status: int | None = None
    cpu_s = 0.0

    def drain(fd: int) -> bool:
        try:
            chunk = os.read(fd, PIPE_CHUNK)
        except BlockingIOError:
            return True
        if not chunk:
            selector.unregister(fd)
            os.close(fd)
            return False
        seen[fd] += len(chunk)
        room = cap - len(kept[fd])
        if room > 0:
            kept[fd] += chunk[:room]
        return True

    while True:
        for key, _ in selector.select(POLL_S):
            if checkpoints is not None and key.fd == checkpoints.fileno():
                if not checkpoints.read():
                    stop_checkpoints()
                continue
            drain(key.fd)
            if stopped_by is None and seen[key.fd] > cap:
                stopped_by = "output_limit"
                _kill_everything(child, is_init)
        # reap: the program, and as PID 1 every orphan it left behind
        while True:
            try:
                pid, status = os.waitpid(-1 if is_init else child, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if pid == child:
                child_status = status
        if child_status is not None or stopped_by is not None:
            # again on every turn: a process caught mid-fork may have left a child behind
            _kill_everything(child, is_init)  # a double-forked daemon dies with its program
            stop_checkpoints()  # nothing handed over once the program is done or stopped
        if child_status is not None and not selector.get_map():
            break
        used = resource.getrusage(RUSAGE_CHILDREN)
        cpu_s = used.ru_utime + used.ru_stime + _live_cpu_s(None if is_init else child)
        elapsed = time.monotonic() - started
        if stopped_by is None and child_status is None:
            if cpu_s > limits["cpu_s"]:
                stopped_by = "cpu"
                _kill_everything(child, is_init)
            elif elapsed > limits["wall_s"]:
                stopped_by = "wall"
                _kill_everything(child, is_init)
        if child_status is not None and elapsed > limits["wall_s"] + 5:
            break  # a pipe held open by something unkillable: stop waiting for EOF

    wall_s = time.monotonic() - started
    used = resource.getrusage(RUSAGE_CHILDREN)
    cpu_s = max(cpu_s, used.ru_utime + used.ru_stime)
    peak, oom_kills = _cgroup_memory()
    # The program's folder is its own (0700), and root here may not enter it: read it as
    # its owner. Every process of the program is dead by now.
    uid = untrusted_uid(job)
    if uid is not None:
        os.seteuid(uid)
    try:
        files, files_truncated, notes = pack_outputs(os.path.join(workdir, OUTPUT_DIR), int(limits["files_bytes"]))
    finally:
        if uid is not None:
            os.seteuid(0)
    report: Report = {
        "exit_code": os.WEXITSTATUS(child_status) if child_status is not None and os.WIFEXITED(child_status) else None,
        "signal": os.WTERMSIG(child_status) if child_status is not None and os.WIFSIGNALED(child_status) else None,
        "stopped_by": stopped_by,
        "wall_s": wall_s,
        "cpu_s": cpu_s,
        "max_rss_bytes": max(peak, used.ru_maxrss * 1024),
        "oom_kills": oom_kills,
        "stdout_truncated": seen[out_r] > cap,
        "stderr_truncated": seen[err_r] > cap,
        "files_truncated": files_truncated,
        "notes": notes,
    }
    return report, bytes(kept[out_r]), bytes(kept[err_r]), files


PRELOADED: list[str] = []


def preload(modules: list[str]) -> None:
    """Import what the program will need, one thread each: the zygote forks after this."""
    for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(variable, "1")  # read when the libraries load; a fork needs no pool
    for module in modules:
        __import__(module)
        PRELOADED.append(module)


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["--preload"]:
        preload([m for m in args[1].split(",") if m])
    _prctl(PR_SET_DUMPABLE, 0)  # the program may not read our memory or our stdout through /proc
    os.umask(0o077)
    if os.getpid() == 1:  # a real sandbox, never the host's own /tmp (unisolated development)
        os.chmod("/tmp", 0o711)  # root alone may write; homes are made there for each family
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    zygote = fork_zygote(own_pid_namespaces())  # before the job: nothing of it ever reaches the zygote's memory
    _write_all(1, READY)
    job, tar_bytes = read_job(lambda n: _read_exact(0, n))
    unpack_files(tar_bytes, job["workdir"])
    del tar_bytes
    report, stdout, stderr, files = supervise(job, zygote)
    _write_all(1, pack_report(report, stdout, stderr, files))
    os._exit(0)


if __name__ == "__main__":
    main()
