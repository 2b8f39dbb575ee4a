"""Real processes a fault test starts and breaks: Celery workers, a Redis of its own, and
proxies it can cut between the workers and PostgreSQL or the Docker engine; and for the
scale-out bench, simulated hosts: network namespaces and a CPU slice each."""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from sandbox.cgroups import RunCgroup, own_cgroup_paths

T = TypeVar("T")
ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def docker_is_up() -> bool:
    return shutil.which("docker") is not None and subprocess.run(
        ["docker", "info"], capture_output=True, timeout=30).returncode == 0


def wait_for(predicate: Callable[[], T], timeout: float, what: str, interval: float = 0.2) -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


class RedisServer:
    """A redis-server on a free port, without persistence (as the broker restart of the issue)."""

    def __init__(self, workdir: Path, host: str = "127.0.0.1"):
        self.port = free_port()
        self.workdir = workdir
        self.host = host
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://{self.host}:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", self.host, "--save", "", "--appendonly", "no",
             "--protected-mode", "no",
             "--dir", str(self.workdir)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(self._answers, 10, "redis-server")

    def _answers(self) -> bool:
        try:
            with socket.create_connection((self.host, self.port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)


class Proxy:
    """Forwards connections to ``target``; cut() drops them all and refuses new ones until restore().

    ``listen`` is None for a TCP port on 127.0.0.1 (``port``), or a Unix socket path.
    """

    def __init__(self, target: tuple[str, int] | str, listen: str | None = None, host: str = "127.0.0.1"):
        self.target = target
        self.listen = listen
        family = socket.AF_UNIX if listen else socket.AF_INET
        self.server = socket.socket(family, socket.SOCK_STREAM)
        if listen:
            self.server.bind(listen)
        else:
            self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.server.bind((host, 0))
        self.server.listen(128)
        self.port = None if listen else self.server.getsockname()[1]
        self.open = True
        self._live: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _connect_target(self) -> socket.socket:
        if isinstance(self.target, str):
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            upstream.connect(self.target)
            return upstream
        return socket.create_connection(self.target, timeout=5)

    def _accept(self) -> None:
        while not self._stopped:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            if not self.open:
                client.close()
                continue
            try:
                upstream = self._connect_target()
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._live.update((client, upstream))
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                sock.close()
                with self._lock:
                    self._live.discard(sock)

    def cut(self) -> None:
        """Every connection through the proxy breaks now; new ones are refused."""
        self.open = False
        with self._lock:
            live = list(self._live)
        for sock in live:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def restore(self) -> None:
        self.open = True

    def close(self) -> None:
        self._stopped = True
        self.cut()
        self.server.close()
        if self.listen:
            Path(self.listen).unlink(missing_ok=True)


class Worker:
    """`celery worker` as an operator runs it (prefork, one child), in its own process group."""

    def __init__(self, env: dict[str, str], log: Path, name: str, queues: str = "cpu", beat: bool = False,
                 netns: str | None = None, cpu_slice: CpuSlice | None = None):
        self.env, self.log_path, self.name, self.queues, self.beat = env, log, name, queues, beat
        self.netns = netns
        self.cpu_slice = cpu_slice
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        argv = [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", self.queues, "--concurrency", "1",
                "--pool", "prefork", "--loglevel", "INFO", "--hostname", f"{self.name}@%h"]
        if self.beat:
            argv += ["--beat", "--schedule", str(self.log_path.with_suffix(".beat"))]
        argv = self._in_namespace(argv)
        self.log = open(self.log_path, "a")
        # Joined before exec, so that the worker and all it starts (pool, beat, sandboxes) are in the slice.
        join = self.cpu_slice.join_this_process if self.cpu_slice else None
        process = self.process = subprocess.Popen(argv, cwd=ROOT, env=self.env, stdout=self.log,
                                                  stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=join)
        wait_for(lambda: " ready." in self.log_path.read_text() or process.poll() is not None, 90,
                 f"worker {self.name} to start")
        assert process.poll() is None, self.log_path.read_text()[-3000:]

    @property
    def started(self) -> subprocess.Popen[bytes]:
        """The worker's main process; only a started worker has one."""
        assert self.process is not None, f"worker {self.name} was never started"
        return self.process

    def pool_children(self) -> list[int]:
        """Every child of the worker: its pool's processes, and beat where it runs inside."""
        return _children(self.started.pid)

    def kill_all(self) -> None:
        """kill -9 of the whole worker: the main process and its pool."""
        os.killpg(self.started.pid, signal.SIGKILL)
        self.started.wait(30)

    def kill_pool_child(self) -> None:
        """kill -9 of the pool's processes only, as the OOM killer does. The worker names them
        (an embedded beat is a child of the worker too, and must live on), asked as an operator
        asks it: ``celery inspect stats``, run with the worker's own settings and broker."""
        hostname = f"{self.name}@{socket.gethostname()}"
        asked = subprocess.run(
            self._in_namespace([sys.executable, "-m", "celery", "-A", "config", "inspect", "stats", "--json",
                                "--destination", hostname, "--timeout", "10"]),
            cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=120)
        replies = asked.stdout.strip().splitlines()
        stats = json.loads(replies[-1]) if asked.returncode == 0 and replies else {}
        assert hostname in stats, f"worker {hostname} did not answer: {asked.stdout[-2000:]} {asked.stderr[-2000:]}"
        processes = stats[hostname]["pool"]["processes"]
        assert processes and set(processes) <= set(self.pool_children()), processes
        for child in processes:
            os.kill(child, signal.SIGKILL)

    def _in_namespace(self, argv: list[str]) -> list[str]:
        """``argv`` run where the worker runs: in its network namespace, where it has one."""
        return ["ip", "netns", "exec", self.netns, *argv] if self.netns else argv

    def cold_shutdown(self) -> None:
        """Ctrl-C twice: warm shutdown asked, then cold."""
        self.started.send_signal(signal.SIGINT)
        time.sleep(0.5)
        self.started.send_signal(signal.SIGINT)
        self.started.wait(60)
        os.killpg(self.started.pid, signal.SIGKILL) if _group_alive(self.started.pid) else None

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                pass
        if self.process and _group_alive(self.process.pid):
            os.killpg(self.process.pid, signal.SIGKILL)
        if self.process:
            self.log.close()


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


class VirtualHosts:
    """Network namespaces joined by veth pairs to a bridge on this machine: "hosts" that reach
    this machine's services only over a virtual network (10.201.N.0/24), as workers on other
    machines would. Needs root and iproute2."""

    def __init__(self, count: int):
        tag = os.getpid() % 100000
        self.subnet = 10 + tag % 200
        self.bridge = f"gdbr{tag}"
        self.gateway = f"10.201.{self.subnet}.1"
        self.namespaces = [f"gdhost{tag}-{i}" for i in range(count)]
        self._links = [f"gdv{tag}h{i}" for i in range(count)]

    @staticmethod
    def available() -> bool:
        return os.geteuid() == 0 and shutil.which("ip") is not None

    def __enter__(self) -> VirtualHosts:
        ip = self._ip
        ip("link", "add", self.bridge, "type", "bridge")
        ip("addr", "add", f"{self.gateway}/24", "dev", self.bridge)
        ip("link", "set", self.bridge, "up")
        for i, (ns, link) in enumerate(zip(self.namespaces, self._links, strict=True)):
            ip("netns", "add", ns)
            ip("link", "add", link, "type", "veth", "peer", "name", "eth0", "netns", ns)
            ip("link", "set", link, "master", self.bridge)
            ip("link", "set", link, "up")
            ip("-n", ns, "addr", "add", f"10.201.{self.subnet}.{10 + i}/24", "dev", "eth0")
            ip("-n", ns, "link", "set", "eth0", "up")
            ip("-n", ns, "link", "set", "lo", "up")
        return self

    def __exit__(self, *exc: object) -> None:
        for ns, link in zip(self.namespaces, self._links, strict=True):
            subprocess.run(["ip", "link", "del", link], capture_output=True)
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        subprocess.run(["ip", "link", "del", self.bridge], capture_output=True)

    @staticmethod
    def _ip(*args: str) -> None:
        done = subprocess.run(["ip", *args], capture_output=True, text=True)
        assert done.returncode == 0, f"ip {' '.join(args)}: {done.stderr}"


class CpuSlice:
    """A cgroup with a fixed CPU quota (``cpus`` cores' worth of every 100 ms period) for a
    simulated host: its worker and everything the worker starts share that quota, as the
    processes of a real host share its cores. The local sandbox nests each run's cgroup under
    its worker's, so a run cannot leave the slice. cgroup v2 (``cpu.max``) where the cpu
    controller is delegated to this process's cgroup, else v1 (``cpu.cfs_quota_us``, and
    ``cpuacct`` beside it for the CPU used). Needs root.

    A quota is a ceiling, not a reservation: on a busy machine the slice competes as one
    scheduling entity among all the others. ``reserved`` also gives it a hundred times the
    default weight, so that other load yields to it up to its quota, as a host's own cores
    would."""

    PERIOD_US = 100_000
    RESERVED_WEIGHT = {1: 1024 * 100, 2: 10_000}  # cpu.shares (default 1024), cpu.weight (default 100, at most 10000)
    V1_CPU = Path("/sys/fs/cgroup/cpu")
    V1_CPUACCT = Path("/sys/fs/cgroup/cpuacct")
    V2 = Path("/sys/fs/cgroup")

    def __init__(self, name: str, cpus: float, reserved: bool = False):
        self.name, self.cpus, self.reserved = name, cpus, reserved
        own = own_cgroup_paths()
        v2_parent = self.V2 / own.get("", "/").lstrip("/")
        if self._has_v2_cpu(v2_parent):
            self.version, self.dirs = 2, [v2_parent / name]
        else:
            self.version = 1
            self.dirs = [self.V1_CPU / own.get("cpu", "/").lstrip("/") / name]
            if self.V1_CPUACCT.is_dir() and self.V1_CPUACCT.resolve() != self.V1_CPU.resolve():
                self.dirs.append(self.V1_CPUACCT / own.get("cpuacct", "/").lstrip("/") / name)

    @staticmethod
    def _has_v2_cpu(parent: Path) -> bool:
        try:
            return "cpu" in (parent / "cgroup.subtree_control").read_text().split()
        except OSError:
            return False

    @classmethod
    def available(cls) -> bool:
        own = own_cgroup_paths() if Path("/proc/self/cgroup").exists() else {}
        return os.geteuid() == 0 and (
            (cls.V1_CPU / "cpu.cfs_quota_us").exists()
            or cls._has_v2_cpu(cls.V2 / own.get("", "/").lstrip("/")))

    def __enter__(self) -> CpuSlice:
        for folder in self.dirs:
            folder.mkdir()
        quota = int(self.cpus * self.PERIOD_US)
        if self.version == 2:
            (self.dirs[0] / "cpu.max").write_text(f"{quota} {self.PERIOD_US}")
        else:
            (self.dirs[0] / "cpu.cfs_period_us").write_text(str(self.PERIOD_US))
            (self.dirs[0] / "cpu.cfs_quota_us").write_text(str(quota))
        if self.reserved:
            weight_file = "cpu.weight" if self.version == 2 else "cpu.shares"
            (self.dirs[0] / weight_file).write_text(str(self.RESERVED_WEIGHT[self.version]))
        return self

    def join_this_process(self) -> None:
        """Moves the calling process in (a ``preexec_fn``: the child, before it execs)."""
        for folder in self.dirs:
            (folder / "cgroup.procs").write_text(str(os.getpid()))

    def usage(self) -> dict[str, float]:
        """CPU-seconds used by the slice, and how often and how long its quota held it back."""
        stat = dict(line.split() for line in (self.dirs[0] / "cpu.stat").read_text().splitlines() if line.strip())
        if self.version == 2:
            return {"cpu_s": int(stat["usage_usec"]) / 1e6, "periods": int(stat["nr_periods"]),
                    "throttled_periods": int(stat["nr_throttled"]), "throttled_s": int(stat["throttled_usec"]) / 1e6}
        used = int((self.dirs[-1] / "cpuacct.usage").read_text()) / 1e9 if len(self.dirs) > 1 else float("nan")
        return {"cpu_s": used, "periods": int(stat["nr_periods"]),
                "throttled_periods": int(stat["nr_throttled"]), "throttled_s": int(stat["throttled_time"]) / 1e9}

    def __exit__(self, *exc: object) -> None:
        """Whatever is left inside (a sandbox's run cgroup nested in it included) is killed, then
        the cgroups are removed, as the local sandbox removes a run's."""
        group = RunCgroup(self.dirs, self.version)
        group.kill_all(recursive=True)
        for folder in self.dirs:
            for nested in sorted((p for p in folder.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
                nested.rmdir()
        group.remove()


# Where DockerEngine keeps its images between runs (deploy/build.sh keeps its wheels beside it).
ENGINE_CACHE = Path(os.environ.get("GRAPHDOJO_CACHE", "/var/cache/graphdojo")) / "test-dockerd"


class DockerEngine:
    """A dockerd of the test's own: its socket, data and state in a folder of its own, so that a
    test can restart an engine without stopping the containers of everyone else on the machine.
    ``copy_image`` brings it an image from the machine's engine. Its images are kept between
    runs in ``cache`` (a gigabyte for the sandbox image, copied again only when the machine's
    image changed) when no other test's engine holds it; else they live and die with it.
    Needs root and iproute2."""

    def __init__(self, cache: Path = ENGINE_CACHE):
        # Short paths: containerd's sockets live under the exec root (a Unix socket path holds
        # 107 bytes).
        self.root = Path(tempfile.mkdtemp(prefix="gdd-", dir="/tmp"))
        self.data = self.root / "data"
        self._cache_lock = None
        try:
            cache.mkdir(parents=True, exist_ok=True)
            lock = open(cache / "lock", "w")
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            self._cache_lock, self.data = lock, cache / "data"
        except OSError:  # another engine holds the cache, or it cannot be written: a data root of our own
            pass
        self.socket = self.root / "docker.sock"
        self.url = f"unix://{self.socket}"
        (self.root / "daemon.json").write_text("{}")  # not the machine's: no hosts or data root of its own
        # A bridge of its own, made here. Never `--bridge none`: a dockerd started so deletes
        # the machine's docker0, which the machine's engine needs for every other container.
        tag = os.getpid() % 100000
        self.bridge = f"gddbr{tag}"
        done = subprocess.run(["ip", "link", "add", self.bridge, "type", "bridge"], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        subprocess.run(["ip", "addr", "add", f"10.202.{tag % 250}.1/24", "dev", self.bridge], check=True)
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        argv = ["dockerd", "--data-root", str(self.data), "--exec-root", str(self.root / "x"),
                "--host", self.url, "--pidfile", str(self.root / "docker.pid"),
                "--config-file", str(self.root / "daemon.json"),
                # Sandboxes have no network; nothing of the machine's firewall is touched.
                "--bridge", self.bridge, "--iptables=false", "--ip6tables=false", "--ip-masq=false"]
        with open(self.root / "dockerd.log", "a") as log:
            process = self.process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                                      start_new_session=True)
        wait_for(lambda: self.answers() or process.poll() is not None, 60, "the test's own dockerd")
        assert process.poll() is None, (self.root / "dockerd.log").read_text()[-3000:]

    def answers(self) -> bool:
        return subprocess.run(["docker", "-H", self.url, "version"], capture_output=True, timeout=30).returncode == 0

    def copy_image(self, image: str) -> None:
        """``image`` as the machine's engine has it now (copied unless the cache has that one)."""
        def image_id(*host: str) -> str:
            return subprocess.run(["docker", *host, "image", "inspect", "-f", "{{.Id}}", image],
                                  capture_output=True, text=True, timeout=60).stdout.strip()

        if image_id() and image_id("-H", self.url) == image_id():
            return
        subprocess.run(["docker", "-H", self.url, "image", "prune", "-af"], capture_output=True, timeout=300)
        saved = subprocess.Popen(["docker", "save", image], stdout=subprocess.PIPE)
        loaded = subprocess.run(["docker", "-H", self.url, "load", "-q"], stdin=saved.stdout, capture_output=True,
                                text=True, timeout=600)
        assert saved.stdout is not None
        saved.stdout.close()
        assert saved.wait(60) == 0 and loaded.returncode == 0, loaded.stderr

    def stop(self) -> None:
        """As an operator's restart stops it: SIGTERM, dockerd stops its containers and exits."""
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(90)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(30)

    def restart(self) -> None:
        self.stop()
        self.start()

    def close(self) -> None:
        self.stop()
        if self.process and _group_alive(self.process.pid):  # its containerd and shims
            os.killpg(self.process.pid, signal.SIGKILL)
        # Whatever a killed daemon left mounted is unmounted first: removing the folder must
        # never reach through a mount.
        mounts = [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()]
        for mount in reversed([m for m in mounts if m.startswith(f"{self.root}/")]):
            subprocess.run(["umount", "-l", mount], capture_output=True)
        subprocess.run(["ip", "link", "del", self.bridge], capture_output=True)
        if self._cache_lock:
            self._cache_lock.close()  # the images stay for the next run
        # An image copied here is a gigabyte of layers: removed in the background, so that the
        # next test need not wait for the disk.
        subprocess.Popen(["rm", "-rf", str(self.root)], start_new_session=True)
