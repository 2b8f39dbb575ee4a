"""sandbox/zygote.py: the zygote on its own (workers forked from a clean interpreter, set up as
an exec would leave them), the syscall filter loaded into a real process (it denies what it
says and allows the rest), and the lent cgroup as root inside a sandbox uses it, on real
cgroups lent the way delegation.py lends them: one folder per controller under one folder."""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from sandbox.framing import CHILD_CGROUP_ENV, CPUACCT, FREEZER, PIDS
from sandbox.zygote import (
    CLONE,
    CLONE3,
    DENIED_X86_64,
    LentCgroup,
    Zygote,
    ZygoteError,
    filter_program,
    filter_supported,
    fork_zygote,
    serve,
)

REPORT = """\
import json, os, random, resource, signal, sys
import numpy
print(json.dumps({
    "argv": sys.argv, "cwd": os.getcwd(), "env": dict(os.environ), "uid": os.getuid(),
    "fds": sorted(int(fd) for fd in os.listdir("/proc/self/fd")),
    "sigterm": signal.getsignal(signal.SIGTERM) == signal.SIG_DFL,
    "sigpipe_ignored": signal.getsignal(signal.SIGPIPE) == signal.SIG_IGN,
    "mask": sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, [])),
    "random": random.random(), "numpy": float(numpy.random.random()),
    "nofile": resource.getrlimit(resource.RLIMIT_NOFILE)[0], "session": os.getsid(0) == os.getpid(),
    "main": sys.modules["__main__"].__dict__.get("__name__"),
}), flush=True)
os.write(3, b"extra")
"""


@pytest.fixture(scope="module")
def zygote():
    launched = Zygote.launch(preload=("numpy",))
    yield launched
    launched.close()


def spawn(zygote: Zygote, tmp_path, code: str, **options):
    out_read, out_write = os.pipe()
    extra_read, extra_write = os.pipe()
    stdin = os.open(os.devnull, os.O_RDONLY)
    try:
        pid, _ = zygote.spawn(["-c", code, "an-argument"], family="tester", env={"ONLY": "this"},
                              fds=(stdin, out_write, out_write, extra_write), **options)
    finally:
        for fd in (stdin, out_write, extra_write):
            os.close(fd)
    with os.fdopen(out_read, "rb") as out, os.fdopen(extra_read, "rb") as extra:
        return pid, out.read(), extra.read()


def test_a_worker_starts_as_a_fresh_interpreter_would(zygote, tmp_path):
    pid, out, extra = spawn(zygote, tmp_path, REPORT)
    report = json.loads(out)
    assert report["argv"] == ["-c", "an-argument"]
    home = report["cwd"]  # a new folder of its own, where its files go
    assert os.path.basename(home).startswith("tester-") and os.stat(home).st_mode & 0o777 == 0o700
    assert report["env"] == {"ONLY": "this", "HOME": home, "TMPDIR": home, "USER": "tester", "LOGNAME": "tester"}
    assert report["fds"] == [0, 1, 2, 3, 4]  # 4 is the listing's own descriptor: the zygote's socket is gone
    assert report["sigterm"] and report["sigpipe_ignored"] and report["mask"] == []
    assert report["session"] and report["main"] == "__main__"
    assert extra == b"extra"
    assert os.WEXITSTATUS(zygote.wait(pid, 10).status) == 0


def test_every_worker_gets_fresh_random_seeds(zygote, tmp_path):
    first = json.loads(spawn(zygote, tmp_path, REPORT)[1])
    second = json.loads(spawn(zygote, tmp_path, REPORT)[1])
    assert first["random"] != second["random"]
    assert first["numpy"] != second["numpy"]


def test_the_exit_status_and_usage_come_back(zygote, tmp_path):
    pid, _, _ = spawn(zygote, tmp_path, "import os\nx = sum(range(3_000_000))\nos._exit(3)")
    ended = zygote.wait(pid, 10)
    assert os.WIFEXITED(ended.status) and os.WEXITSTATUS(ended.status) == 3
    assert ended.ru_utime > 0 and ended.ru_maxrss > 0


def test_a_running_worker_has_no_status_yet(zygote, tmp_path):
    out_read, out_write = os.pipe()
    pid, _ = zygote.spawn(["-c", "import time; time.sleep(30)"], family="tester", env={}, fds=(out_write,) * 3)
    os.close(out_write)
    os.close(out_read)
    assert zygote.wait(pid, 0.2) is None
    os.killpg(pid, signal.SIGKILL)  # its own session
    assert os.WTERMSIG(zygote.wait(pid, 10).status) == signal.SIGKILL


def test_limits_and_the_uid_are_taken_before_the_program_runs(zygote, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("switching uids needs root (CI and the sandboxes run as root)")
    import resource

    # Only modules the zygote holds: this host's Python may live where uid 65534 cannot read.
    code = ("import os, resource\nstatus = open('/proc/self/status').read()\n"
            "caps = [l.split()[1] for l in status.splitlines() if l.startswith(('CapEff', 'NoNewPrivs', 'Seccomp:'))]\n"
            "home = os.stat(os.getcwd())\n"
            "print(os.getuid(), os.getgid(), os.getgroups(), resource.getrlimit(resource.RLIMIT_NOFILE)[0], "
            "open('/proc/self/oom_score_adj').read().strip(), *caps, home.st_uid, oct(home.st_mode & 0o777))")
    pid, out, _ = spawn(zygote, tmp_path, code, uid=65534, rlimits=[(resource.RLIMIT_NOFILE, 64, 64)],
                        oom_score_adj=1000)
    # no capability, no way back, the syscall filter; a home of its own
    assert out.decode().split() == ["65534", "65534", "[]", "64", "1000", "0000000000000000", "1", "2",
                                    "65534", "0o700"]
    zygote.wait(pid, 10)


def test_a_worker_that_cannot_be_set_up_is_an_error_with_its_errno(zygote, tmp_path):
    with pytest.raises(ZygoteError) as raised:
        zygote.spawn(["-c", "pass"], family="tester", env={}, fds=(),
                     cgroup_procs=[str(tmp_path / "missing" / "cgroup.procs")])
    assert raised.value.errno == 2  # ENOENT: the cgroup
    assert zygote.spawn(["-c", "pass"], family="tester", env={}, fds=())[0] > 0  # and it still serves


def test_a_confined_worker_sees_a_pid_namespace_and_a_proc_of_its_own(tmp_path):
    """What gVisor sandboxes do (their root holds CAP_SYS_ADMIN there): here on the host's kernel,
    twice over, since Linux makes a second namespace only after setns brings the zygote back."""
    if os.geteuid() != 0:
        pytest.skip("namespaces and switching uids need root (CI and the sandboxes run as root)")
    ours = os.getpid()  # a trusted process: its /proc entry must not be there to open
    code = ("import os, time\nprint(os.getpid(), sorted(p for p in os.listdir('/proc') if p.isdigit()), "
            f"os.path.exists('/proc/{ours}/environ'), flush=True)\ntime.sleep(30)")
    proc_mounts = open("/proc/self/mountinfo").read().count(" /proc ")
    zygote = Zygote(fork_zygote(pid_namespaces=True))
    try:
        for _ in range(2):
            out_read, out_write = os.pipe()
            pid, _ = zygote.spawn(["-c", code], family="tester", env={}, fds=(out_write,) * 3, uid=65534)
            os.close(out_write)
            with os.fdopen(out_read, "rb") as out:
                line = out.readline().decode()
            assert line.split(" ", 1) == ["1", "['1'] False\n"]  # PID 1 of its own; nothing else there
            assert pid != 1 and os.path.exists(f"/proc/{pid}")  # the trusted side names it by its pid here
            os.kill(pid, signal.SIGKILL)
            assert os.WTERMSIG(zygote.wait(pid, 10).status) == signal.SIGKILL
        assert open("/proc/self/mountinfo").read().count(" /proc ") == proc_mounts  # this side's /proc untouched
        assert os.path.exists(f"/proc/{zygote.pid}")  # ...and it still names the zygote
    finally:
        zygote.close()


def test_closing_the_socket_ends_the_zygote_and_its_workers(tmp_path):
    own = Zygote.launch()
    pid, _ = own.spawn(["-c", "import time; time.sleep(60)"], family="tester", env={}, fds=())
    own.close()  # waits for the zygote to exit
    time.sleep(0.2)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_zygote_refuses_to_fork_once_cuda_is_initialised():
    """Forking after CUDA initialisation is unsafe: a zygote that finds it exits at once,
    and the judge gets a clear error rather than a worker with a broken CUDA context."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = os.fork()
    if pid == 0:
        ours.close()
        fake = type(sys)("torch")
        fake.cuda = type("cuda", (), {"is_initialized": staticmethod(lambda: True)})
        sys.modules["torch"] = fake
        serve(theirs)
        os._exit(0)
    theirs.close()
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 70
    with pytest.raises(ZygoteError, match="CUDA"):
        Zygote(ours)


def test_the_zygote_of_a_real_preload_never_initialises_cuda(tmp_path):
    own = Zygote.launch(preload=("numpy", "torch"))
    try:
        pid, out, _ = spawn(own, tmp_path, "import sys\nprint(sys.modules['torch'].cuda.is_initialized())")
        assert out.strip() == b"False"
        own.wait(pid, 10)
    finally:
        own.close()


# -- the syscall filter --

# Loads the filter (no_new_privs first, as bwrap does), then tries each call by number.
PROBE = r"""
import ctypes, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
program = sys.stdin.buffer.read()
class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]
prog = Prog(len(program) // 8, program)
assert libc.prctl(38, 1, 0, 0, 0) == 0                       # PR_SET_NO_NEW_PRIVS
assert libc.prctl(22, 2, ctypes.byref(prog), 0, 0) == 0, ctypes.get_errno()  # PR_SET_SECCOMP, FILTER
def errno_of(number, *args):
    result = libc.syscall(number, *args)
    return 0 if result >= 0 else ctypes.get_errno()
results = {
    "unshare_user": errno_of(272, 0x10000000),
    "keyctl": errno_of(250, 0, 0, 0, 0),
    "clone3": errno_of(435, 0, 0),
    "bpf": errno_of(321, 0, 0, 0),
    "mount": errno_of(165, 0, 0, 0, 0, 0),
    "shmget": errno_of(29, 0, 4096, 0o1600),
    "mq_open": errno_of(240, b"/q", 0o100, 0o600, 0),
    "getpid": errno_of(39),
    "socket": errno_of(41, 1, 1, 0),                     # AF_UNIX, SOCK_STREAM
    "socketpair": errno_of(53, 1, 1, 0, ctypes.byref((ctypes.c_int * 2)())),
}
open("/tmp/graphdojo-xattr-probe", "w").close()
results["xattr"] = errno_of(188, b"/tmp/graphdojo-xattr-probe", b"user.probe", b"x", 1, 0)  # setxattr
os.unlink("/tmp/graphdojo-xattr-probe")
read_end, write_end = os.pipe()
results["pipe_grown"] = errno_of(72, write_end, 1031, 1 << 20)  # F_SETPIPE_SZ
results["pipe_flags"] = errno_of(72, write_end, 3)                # F_GETFL
results["sysinfo"] = errno_of(99, ctypes.create_string_buffer(128))
results["inotify"] = errno_of(294, 0)                              # inotify_init1
probe_file = os.open(sys.executable, os.O_RDONLY)
results["fadvise_dontneed"] = errno_of(221, probe_file, 0, 0, 4)    # POSIX_FADV_DONTNEED: eviction
results["fadvise_random"] = errno_of(221, probe_file, 0, 0, 1)      # POSIX_FADV_RANDOM
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
mapping = libc.mmap(None, 4096, 1, 2, probe_file, 0)                # PROT_READ, MAP_PRIVATE
results["madvise_pageout"] = errno_of(28, ctypes.c_void_p(mapping), 4096, 21)
results["madvise_dontneed"] = errno_of(28, ctypes.c_void_p(mapping), 4096, 4)  # unmaps our copy: allowed
pid = os.fork()  # clone without CLONE_NEW* flags stays allowed
if pid == 0:
    os._exit(7)
results["fork"] = os.waitpid(pid, 0)[1] >> 8
print(json.dumps(results))
"""


def test_the_program_is_whole_instructions_with_jumps_in_range():
    program = filter_program()
    assert len(program) % 8 == 0 and 0 < len(program) // 8 < 4096
    assert program[-32:-28] == (0x06).to_bytes(2, "little") + b"\0\0"  # ends in RET instructions


def test_a_process_under_the_filter_is_denied_exactly_what_it_names(requires):
    requires("x86_64, where the filter applies", filter_supported(), "run on x86_64")
    done = subprocess.run([sys.executable, "-I", "-c", PROBE], input=filter_program(),
                          capture_output=True, timeout=30)
    assert done.returncode == 0, done.stderr.decode()
    results = json.loads(done.stdout)
    results.pop("xattr")  # the file system's own answer: the base filter leaves setxattr alone
    eperm, enosys = 1, 38
    assert results == {"unshare_user": eperm, "keyctl": eperm, "clone3": enosys, "bpf": eperm, "mount": eperm,
                       "shmget": eperm, "mq_open": eperm,
                       "getpid": 0, "fork": 7, "socket": 0, "socketpair": 0, "pipe_grown": 0, "pipe_flags": 0,
                       "sysinfo": 0, "inotify": 0, "fadvise_dontneed": 0, "fadvise_random": 0,
                       "madvise_pageout": 0, "madvise_dontneed": 0}


def test_a_confined_process_has_no_socket_and_no_grown_pipe(requires):
    """Kernel buffers that gVisor's meminfo does not count stay small (red team round 5)."""
    requires("x86_64, where the filter applies", filter_supported(), "run on x86_64")
    done = subprocess.run([sys.executable, "-I", "-c", PROBE], input=filter_program(confined=True),
                          capture_output=True, timeout=30)
    assert done.returncode == 0, done.stderr.decode()
    results = json.loads(done.stdout)
    eperm = 1
    assert (results["socket"], results["socketpair"], results["pipe_grown"]) == (eperm, eperm, eperm), results
    assert results["xattr"] == 95, results  # EOPNOTSUPP: no extended attributes (nor ACLs) of its own
    assert (results["pipe_flags"], results["getpid"], results["fork"], results["mount"]) == (0, 0, 7, eperm), results
    # Nothing of the host's activity, no inotify queue, no eviction from the shared page cache
    # (round 7); the advice that evicts nothing stays allowed.
    assert (results["sysinfo"], results["inotify"], results["fadvise_dontneed"], results["madvise_pageout"]) == (
        eperm, eperm, eperm, eperm), results
    assert (results["fadvise_random"], results["madvise_dontneed"]) == (0, 0), results


def test_every_denied_name_is_a_distinct_syscall_number():
    numbers = list(DENIED_X86_64.values())
    assert len(numbers) == len(set(numbers)) and CLONE not in numbers and CLONE3 not in numbers


# -- the lent cgroup --

V1 = Path("/sys/fs/cgroup")
FORKS = """\
import os, time
made = 0
for _ in range(10):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        os.close(1), os.close(2)  # the test reads the parent's output to its end
        time.sleep(5)
        os._exit(0)
    made += 1
print(made)
"""


@pytest.fixture
def lent(requires):
    """A folder holding freezer/, pids/ and (where the host has it) cpuacct/ as delegation.py
    mounts them (v1), and its env."""
    requires("root, to make cgroups", os.geteuid() == 0, "run the tests as root (CI does)")
    requires("the cgroup v1 freezer and pids", (V1 / FREEZER).is_dir() and (V1 / PIDS).is_dir(),
             "mount the freezer and pids hierarchies")
    name = f"graphdojo-test-{uuid.uuid4().hex[:8]}"
    folder = Path(tempfile.mkdtemp(prefix="lent-"))
    controllers = (FREEZER, PIDS, CPUACCT) if (V1 / CPUACCT).is_dir() else (FREEZER, PIDS)
    made = [V1 / controller / name for controller in controllers]
    for controller, cgroup in zip(controllers, made, strict=True):
        cgroup.mkdir()
        (folder / controller).symlink_to(cgroup)
    yield folder
    for cgroup in made:
        procs = (cgroup / "cgroup.procs").read_text().split()
        if cgroup.parent.name == FREEZER:
            (cgroup / "freezer.state").write_text("THAWED")
        for pid in procs:
            try:
                os.kill(int(pid), 9)
            except ProcessLookupError:
                pass
    for cgroup in made:
        for _ in range(100):
            try:
                cgroup.rmdir()
                break
            except OSError:
                time.sleep(0.05)
    shutil.rmtree(folder)


def _join(cgroup: LentCgroup):
    def enter() -> None:  # in the child, while still root: into every controller's folder
        for procs in cgroup.join_files():
            Path(procs).write_text(str(os.getpid()))
    return enter


def _ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def test_no_cgroup_is_lent_without_the_variable_or_a_freezer_to_write(tmp_path):
    assert LentCgroup.lent({}) is None
    (tmp_path / PIDS).mkdir()
    assert LentCgroup.lent({CHILD_CGROUP_ENV: str(tmp_path)}) is None


def test_what_is_inside_freezes_and_thaws_as_one(lent):
    cgroup = LentCgroup.lent({CHILD_CGROUP_ENV: str(lent)})
    assert cgroup is not None and not cgroup.v2
    busy = subprocess.Popen(["/bin/sh", "-c", "while :; do :; done"], preexec_fn=_join(cgroup))
    try:
        assert cgroup.pids() == [busy.pid]
        assert cgroup.freeze(settle_s=5.0) is True and cgroup.is_frozen()
        before = _ticks(busy.pid)
        time.sleep(0.3)
        assert _ticks(busy.pid) == before  # not one tick while frozen
        cgroup.thaw()
        deadline = time.monotonic() + 5
        while _ticks(busy.pid) == before and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _ticks(busy.pid) > before
    finally:
        busy.kill()
        busy.wait(timeout=10)


def test_the_process_cap_binds_everything_inside(lent):
    cgroup = LentCgroup.lent({CHILD_CGROUP_ENV: str(lent)})
    assert cgroup is not None
    cgroup.limit_processes(3)
    assert (lent / PIDS / "pids.max").read_text().strip() == "3"
    done = subprocess.run([sys.executable, "-c", FORKS], preexec_fn=_join(cgroup), capture_output=True, text=True,
                          timeout=30)
    assert done.stdout.strip() == "2", done  # itself and two children: three in all


BURN_AND_END = """\
import os, time
pid = os.fork()
if pid == 0:  # a child that burns 0.2 s of CPU and ends: no per-task count can see it afterwards
    end = time.process_time() + 0.2
    while time.process_time() < end:
        pass
    os._exit(0)
os.waitpid(pid, 0)
"""


def test_the_cpu_count_covers_tasks_that_ended(lent, requires):
    requires("the cgroup v1 cpuacct", (lent / CPUACCT).is_dir(), "mount the cpuacct hierarchy")
    cgroup = LentCgroup.lent({CHILD_CGROUP_ENV: str(lent)})
    assert cgroup is not None and str(lent / CPUACCT / "cgroup.procs") in cgroup.join_files()
    before = cgroup.cpu_usage_ns()
    assert before is not None
    subprocess.run([sys.executable, "-c", BURN_AND_END], preexec_fn=_join(cgroup), check=True, timeout=60)
    assert cgroup.pids() == []
    after = cgroup.cpu_usage_ns()
    assert after is not None and after - before >= 0.2e9
