"""The zygote on its own: workers forked from a clean interpreter, set up as an exec would leave them."""
from __future__ import annotations

import json
import os
import signal
import socket
import sys
import time

import pytest

from sandbox.runtime.zygote import Zygote, ZygoteError

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
        from sandbox.runtime.zygote import serve

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
