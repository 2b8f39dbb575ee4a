"""The Docker Engine backend: one fresh, hardened container per run, an optional warm pool.

Every run gets a new container (never reused, never exec-ed into) whose PID 1 is the
trusted bootstrap (bootstrap.py). Files go in as a tar over the container's stdin and
come back, with the program's capped stdout and stderr, in the bootstrap's report on its
stdout: nothing is bind-mounted, and nothing is copied into the container's tmpfs with
put_archive (a tmpfs mounted at start hides what put_archive wrote before it, and a
read-only root refuses it).

The host enforces a wall clock beyond the bootstrap's own (kill, not stop), removes the
container in every case, and labels every container so that ``janitor()`` can remove
what a crashed worker left behind: expired containers, and at once the containers of a
process on this host that is gone (``OWNER_LABEL``: a warm pool outlives no worker).
"""
from __future__ import annotations

import functools
import logging
import os
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import docker
from docker.errors import APIError, DockerException, ImageNotFound, NotFound
from docker.models.containers import _create_container_args  # type: ignore[attr-defined]  # what containers.create sends
from docker.types import DeviceRequest, LogConfig, Mount, Ulimit

from sandbox.base import (
    HOST_COUNTERS_IN_PROC,
    HOST_COUNTERS_IN_SYS,
    HOST_COUNTERS_PER_CPU,
    Limits,
    Outcome,
    RunOptions,
    Sandbox,
    SandboxUnavailable,
)
from sandbox.cgroups import remove_stale
from sandbox.config import DEFAULT_IMAGE, DockerConfig
from sandbox.delegation import Delegation
from sandbox.framing import MEMINFO, MEMORY_USAGE_ENV, READY, WORKDIR, JobLimits, ProtocolError
from sandbox.protocol import (
    BOOTSTRAP_SOURCE,
    HOST_GRACE_S,
    encode_job,
    failed_outcome,
    outcome_from_report,
    report_budget,
    split_stream,
)

if TYPE_CHECKING:
    from docker.models.containers import Container

log = logging.getLogger(__name__)

SANDBOX_PYTHON = "/opt/venv/bin/python3"
LABEL = "graphdojo.sandbox"
EXPIRES_LABEL = "graphdojo.expires"
POOL_LABEL = "graphdojo.pool"
# host/pid/start time of the process that started the container: on this host, a container
# whose process is gone (killed, stopped without closing its sandbox) is an orphan.
OWNER_LABEL = "graphdojo.owner"
# What the trusted side needs inside: drop untrusted processes to the lent uids (SETUID,
# SETGID), give each family its home (CHOWN) and stop the student's processes (KILL).
CAPABILITIES = ["SETUID", "SETGID", "KILL", "CHOWN"]
# Under gVisor also SYS_ADMIN and SYS_CHROOT, for the bootstrap and the zygote alone (the judge and every
# worker drop it before they run anything; no_new_privs keeps an exec from regaining it): to
# give each untrusted family a PID namespace and a root with a /proc of its own. gVisor's /proc lets any
# uid read another's environ and maps and list its descriptors, and ignores hidepid; there the
# namespace is what keeps the trusted processes out of sight (zygote.py). It is the sentry's
# capability, applied by gVisor's own kernel, never the host's. Linux refuses those reads
# already, and SYS_ADMIN under runc would be the host kernel's (and open Docker's seccomp
# profile up to mount, unshare and setns for the whole container), so runc goes without.
RUNSC_CAPABILITIES = [*CAPABILITIES, "SYS_ADMIN", "SYS_CHROOT"]
# cpu.shares: a pooled container preloads (imports torch) at a low weight, so that refilling
# never slows a running grading down; taken for a job, it gets the normal weight back.
POOL_CPU_SHARES = 64
RUNNING_CPU_SHARES = 1024
STARTUP_GRACE_S = 30.0   # a cold container must have read its job within this
POOL_TTL_S = 3600.0      # a pooled container older than this is replaced (and the janitor may take it)
POOL_READY_TIMEOUT_S = 120.0
STDERR_CAP = 64 * 1024
# gVisor's sentry runs its own host threads inside the container's pids cgroup: it fails to
# start under ~40, and on the ptrace platform a fork loop makes it grow hundreds more (686
# after 3 s here) until, at the limit, the sentry dies. So under runsc the host cap is
# only a backstop; the program's own processes are capped by RLIMIT_NPROC, which gVisor
# enforces even for root.
RUNSC_HOST_PIDS = 4096
# Docker's own list of hidden paths: naming any replaces it, so ours extends it.
DOCKER_MASKED_PATHS = (
    "/proc/asound", "/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list",
    "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/sys/firmware",
)


@functools.cache
def _host_cpus() -> tuple[str, ...]:
    """This host's CPU folders in /sys, listed once: every container asks."""
    return tuple(sorted(path.name for path in Path("/sys/devices/system/cpu").glob("cpu[0-9]*")))


def masked_paths(cpus: Sequence[str] | None = None) -> list[str]:
    """What runc hides besides Docker's list: the host's activity counters (base.py says why).
    Per-CPU folders are named for this host's CPUs (the engine's, on every deployment we
    know of); runc skips a path that does not exist."""
    if cpus is None:
        cpus = _host_cpus()
    return [
        *DOCKER_MASKED_PATHS,
        *(f"/proc/{name}" for name in HOST_COUNTERS_IN_PROC),
        *(f"/sys/{name}" for name in HOST_COUNTERS_IN_SYS),
        *(f"/sys/devices/system/cpu/{cpu}/{name}" for cpu in cpus for name in HOST_COUNTERS_PER_CPU),
    ]


def container_config(
    image: str,
    limits: Limits,
    options: RunOptions,
    runtime: str = "runc",
    preload: Sequence[str] = (),
    pooled: bool = False,
    lifetime_s: float | None = None,
    extra_labels: Mapping[str, str] | None = None,
    mounts: Mapping[str, str] | None = None,
    cgroup_parent: str | None = None,
) -> dict[str, Any]:
    """The keyword arguments of ``containers.create`` for one sandbox (pure, so it can be inspected)."""
    lifetime_s = lifetime_s if lifetime_s is not None else STARTUP_GRACE_S + limits.wall_s + HOST_GRACE_S + 60
    labels = {**(extra_labels or {}), LABEL: "1", EXPIRES_LABEL: f"{time.time() + lifetime_s:.0f}"}
    if pooled:
        labels[POOL_LABEL] = "1"
    config: dict[str, Any] = dict(
        image=image,
        # The bootstrap travels with each container rather than in the image, so the
        # host and its sandboxes always speak the same protocol version.
        entrypoint=[SANDBOX_PYTHON, "-I", "-c", BOOTSTRAP_SOURCE],
        command=["--preload", ",".join(preload)] if preload else [],
        labels=labels,
        detach=True,
        stdin_open=True,
        tty=False,
        user="0:0",  # root inside, with only the capabilities below: the judge drops to the lent uid
        hostname="sandbox",
        environment={},  # nothing of the worker's environment, secrets included
        network_mode="none",
        read_only=True,
        # /tmp: root alone writes there (the bootstrap makes sure of it: runc copies the
        # image's 1777 up over this mode); each family's home is made inside it.
        tmpfs={
            "/tmp": f"rw,nosuid,nodev,size={limits.tmpfs_mb}m,mode=0711",
            WORKDIR: f"rw,nosuid,nodev,size={limits.tmpfs_mb}m,mode=0700",
            # runc mounts the IPC namespace's message queues here, writable by every uid
            "/dev/mqueue": "ro,nosuid,nodev,noexec,size=4k,mode=0755",
        },
        ipc_mode="none",  # no /dev/shm: a shared folder every uid could write
        working_dir="/",
        mem_limit=f"{limits.memory_mb}m",
        memswap_limit=f"{limits.memory_mb}m",  # swap == memory, or the OOM killer never fires inside the limit
        pids_limit=RUNSC_HOST_PIDS if runtime == "runsc" else limits.pids,
        nano_cpus=int(limits.cpus * 1e9),
        cpu_shares=POOL_CPU_SHARES if pooled else RUNNING_CPU_SHARES,
        cap_drop=["ALL"],
        cap_add=RUNSC_CAPABILITIES if runtime == "runsc" else CAPABILITIES,
        security_opt=["no-new-privileges"],
        ulimits=[Ulimit(name="core", soft=0, hard=0)],
        # Output reaches the host only through the attach stream, read with a budget:
        # the engine must not keep a flood on disk.
        log_config=LogConfig(type="none"),
        runtime=runtime,
        # The bootstrap is PID 1 and reaps like an init; docker's init would make it
        # PID 2 and so killable by the program (kill(-1)).
        init=False,
    )
    if runtime != "runsc":  # gVisor shows each sandbox counters of its own
        config["masked_paths"] = masked_paths()
    if cgroup_parent:  # e.g. a slice of their own, to account or cap all sandboxes together
        config["cgroup_parent"] = cgroup_parent
    if mounts:  # only the lent child cgroup (delegation.py): files travel by archive, never by mount
        config["mounts"] = [Mount(target, source, type="bind", read_only=False) for source, target in mounts.items()]
    if options.gpus:
        if isinstance(options.gpus, int):
            request = DeviceRequest(count=options.gpus, capabilities=[["gpu"]])
        else:
            request = DeviceRequest(device_ids=list(options.gpus), capabilities=[["gpu"]])
        config["device_requests"] = [request]
    return config


class _Attached:
    """A container, attached before start, speaking the bootstrap protocol over its stdin/stdout."""

    def __init__(
        self, container: Container, raw_socket: socket.socket, keepalive: object, delegation: Delegation
    ) -> None:
        self.container = container
        self.delegation = delegation  # released with the container
        self.socket = raw_socket
        self._keepalive = keepalive  # the SDK's wrapper closes the socket when collected
        self._buffer = bytearray()
        self.stdout = bytearray()
        self.stderr = bytearray()
        self.eof = False
        self.created = time.time()

    def send(self, data: bytes) -> None:
        self.socket.settimeout(30)
        self.socket.sendall(data)

    def read_until(self, deadline: float, stdout_budget: int, stop_after: bytes | None = None) -> str:
        """Read multiplexed frames until EOF, the deadline, the budget or ``stop_after`` on stdout."""
        while True:
            if stop_after is not None and self.stdout.startswith(stop_after):
                return "stop"
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return "deadline"
            self.socket.settimeout(min(remaining, 1.0))
            try:
                chunk = self.socket.recv(65536)
            except (TimeoutError, BlockingIOError):
                continue
            except OSError:
                chunk = b""
            if not chunk:
                self.eof = True
                return "eof"
            self._buffer += chunk
            while len(self._buffer) >= 8:
                stream, size = self._buffer[0], struct.unpack(">I", self._buffer[4:8])[0]
                if len(self._buffer) < 8 + size:
                    break
                payload = bytes(self._buffer[8:8 + size])
                del self._buffer[:8 + size]
                if stream == 2:
                    self.stderr += payload[:max(0, STDERR_CAP - len(self.stderr))]
                else:
                    self.stdout += payload
            if len(self.stdout) + len(self._buffer) > stdout_budget + STDERR_CAP + 8:
                return "report too large"

    def close(self) -> None:
        try:
            self.socket.close()
        except OSError:
            pass


class DockerSandbox(Sandbox):
    name = "docker"

    def __init__(self, config: DockerConfig | None = None) -> None:
        config = config or DockerConfig()
        self.image, self.runtime = config.image, config.runtime
        self.name = f"docker-{self.runtime}"
        self.base_url = config.docker_base_url
        self.labels = dict(config.labels)  # e.g. the queue's name, to tell workers' containers apart
        self.labels[OWNER_LABEL] = owner_token()
        self.cgroup_parent = config.cgroup_parent
        self.client = self._connect()
        try:
            self.client.images.get(self.image)
        except ImageNotFound:
            raise SandboxUnavailable(f"the sandbox image {self.image} is missing: run `make image`") from None
        except (DockerException, OSError) as error:
            raise SandboxUnavailable(f"the Docker engine does not answer: {error}") from None
        if self.runtime not in (self.client.info().get("Runtimes") or {}):
            raise SandboxUnavailable(
                f"the Docker engine has no {self.runtime} runtime: register it in /etc/docker/daemon.json "
                "(sandbox/image/ci-setup.sh does) and restart dockerd")
        self.janitor()
        self.pool = (WarmPool(self, config.pool_size, config.preload, config.pool_limits or Limits())
                     if config.pool_size > 0 else None)

    @property
    def isolated(self) -> bool:
        return True  # every run is a container of its own, under runc or gVisor

    def _connect(self) -> docker.DockerClient:
        try:
            if self.base_url:
                return docker.DockerClient(base_url=self.base_url, timeout=60)
            return docker.from_env(timeout=60)
        except DockerException as error:
            raise SandboxUnavailable(f"the Docker engine does not answer: {error}") from None

    def close(self) -> None:
        """Stop the pool and remove its containers."""
        if self.pool is not None:
            self.pool.close()

    def run(
        self,
        files: Mapping[str, bytes],
        argv: Sequence[str],
        limits: Limits,
        options: RunOptions | None = None,
    ) -> Outcome:
        options = options or RunOptions()
        # gVisor enforces RLIMIT_NPROC even for root, and must: its fork bomb would
        # otherwise exhaust the host pids the sentry itself needs and crash it.
        extra: JobLimits = {"nproc": limits.pids} if self.runtime == "runsc" else {}

        def job_for(attached: _Attached) -> bytes:
            env = {**options.env, **attached.delegation.env()}
            if self.runtime == "runsc":  # gVisor's /proc/meminfo counts this sandbox alone
                env[MEMORY_USAGE_ENV] = MEMINFO
            return encode_job(files, argv, limits, env, WORKDIR, extra, trusted=options.trusted, secret=options.secret)

        warm = self.pool.take(limits, options) if self.pool is not None else None
        if warm is not None:
            try:
                warm.send(job_for(warm))
            except OSError:  # it died between the pool's check and now: start cold
                self.discard(warm)
                warm = None
        attached = warm or self.start(limits, options, preload=options.preload)
        try:
            if warm is None:
                try:
                    attached.send(job_for(attached))
                except OSError as error:
                    raise SandboxUnavailable(f"the sandbox container did not take its job: {error}") from None
            return self._execute(attached, limits, ["warm pool"] if warm else [], trusted=options.trusted)
        finally:
            self.discard(attached)

    def start(self, limits: Limits, options: RunOptions, **config_options: Any) -> _Attached:
        """Create, attach (before start, so no output is lost) and start a container."""
        # gVisor has no freezer controller, and a host cgroup means nothing to its tasks.
        delegation = Delegation(limits.pids, with_cgroup=self.runtime == "runc")
        config = container_config(self.image, limits, options, self.runtime, extra_labels=self.labels,
                                  mounts=delegation.mounts(), cgroup_parent=self.cgroup_parent, **config_options)
        try:
            container = _create(self.client, config)
        except (DockerException, OSError) as error:
            delegation.release()
            raise SandboxUnavailable(f"cannot create a sandbox container: {error}") from None
        try:
            wrapper = container.attach_socket(params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
            raw = cast(socket.socket, getattr(wrapper, "_sock", wrapper))  # the socket the SDK wraps
            attached = _Attached(container, raw, wrapper, delegation)
            container.start()
        except (DockerException, OSError) as error:
            _remove(container)
            delegation.release()
            raise SandboxUnavailable(f"cannot start a sandbox container: {error}") from None
        return attached

    def _execute(self, attached: _Attached, limits: Limits, notes: list[str], *, trusted: bool = False) -> Outcome:
        """Read the report of a container that has its job; stop it at the host's deadline."""
        started = time.monotonic()
        deadline = started + STARTUP_GRACE_S + limits.wall_s + HOST_GRACE_S
        ended = attached.read_until(deadline, report_budget(limits, trusted=trusted) + len(READY))
        killed_by_host = ended != "eof"
        if killed_by_host:
            _kill(attached.container)
        exit_code, oom_flag = _wait_exit(attached.container)
        wall = time.monotonic() - started
        # What the program handed over before the end reached the host even if no report did.
        checkpoint, report = split_stream(bytes(attached.stdout))
        if ended == "deadline":
            return failed_outcome("timeout", self.name, wall, notes, "killed by the host: wall clock", checkpoint)
        if ended != "eof":
            return failed_outcome("sandbox_error", self.name, wall, notes, f"killed by the host: {ended}", checkpoint)
        try:
            return outcome_from_report(report, limits, self.name, oom_seen=oom_flag, notes=notes, checkpoint=checkpoint)
        except ProtocolError as error:
            # Under runc only the OOM killer can SIGKILL PID 1 from inside (the host did
            # not), even when the engine's OOMKilled flag is unset. gVisor lets the program
            # kill PID 1, but then sets OOMKilled faithfully.
            if oom_flag or (exit_code == 137 and self.runtime == "runc"):
                return failed_outcome("memory", self.name, wall, notes, "the sandbox was OOM-killed", checkpoint)
            if exit_code is not None and exit_code > 128:
                outcome = failed_outcome(
                    "signal", self.name, wall, notes, "the program killed the sandbox's supervisor", checkpoint)
                outcome.signal = exit_code - 128
                return outcome
            detail = bytes(attached.stderr).decode(errors="replace").strip()[-2000:]
            return failed_outcome(
                "sandbox_error", self.name, wall, notes, f"{error}; exit {exit_code}: {detail}", checkpoint)

    def discard(self, attached: _Attached) -> None:
        attached.close()
        _remove(attached.container)
        attached.delegation.release()

    def janitor(self) -> int:
        """Remove labelled containers past their expiry (orphans of crashed workers); returns how many."""
        remove_stale()  # child cgroups their delegations left behind
        return janitor(self.client)


def owner_token(pid: int | None = None) -> str:
    """This host, a process and its start time: names the process even after its pid is reused."""
    pid = os.getpid() if pid is None else pid
    return f"{socket.gethostname()}/{pid}/{_start_time(pid)}"


def _start_time(pid: int) -> str:
    """Field 22 of /proc/PID/stat, counted after the command name (which may hold spaces); ""
    for a process that is gone, a zombie included: a killed worker's pool child stays one
    until someone reaps it, and it will never use its containers again."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return "" if fields[0] in ("Z", "X") else fields[19]
    except (OSError, IndexError):
        return ""


def orphaned(labels: Mapping[str, str]) -> bool:
    """Whether the container with these labels belongs to a process of this host that is gone."""
    host, _, rest = labels.get(OWNER_LABEL, "").partition("/")
    pid, _, started = rest.partition("/")
    if host != socket.gethostname() or not pid.isdigit():
        return False  # another host's (or unlabelled): only its expiry tells
    return owner_token(int(pid)) != labels[OWNER_LABEL]


def docker_available(image: object = None, base_url: object = None) -> bool:
    """Whether a Docker engine answers and holds the sandbox image. Patient: an engine busy
    starting containers can take seconds to answer (5 s was too short under load)."""
    try:
        client = docker.DockerClient(base_url=str(base_url), timeout=30) if base_url else docker.from_env(timeout=30)
        try:
            client.images.get(str(image or DEFAULT_IMAGE))
        finally:
            client.close()
    except (DockerException, OSError):
        return False
    return True


def _create(client: docker.DockerClient, config: dict[str, Any]) -> Container:
    """``containers.create``, with the paths the runtime hides: the SDK has no keyword for
    the engine's HostConfig.MaskedPaths, so the request it would send gets them added."""
    config = dict(config)
    masked = config.pop("masked_paths", None)
    if not masked:
        return client.containers.create(**config)
    request = _create_container_args({**config, "version": client.api.api_version})
    request["host_config"]["MaskedPaths"] = masked
    created = client.api.create_container(**request)
    return client.containers.get(created["Id"])


def remove_orphans(docker_base_url: str | None = None) -> int:
    """Remove the containers that processes of this host left behind when they died or
    stopped (a starting worker calls it); returns how many. An engine that does not answer
    removes nothing."""
    try:
        client = docker.DockerClient(base_url=docker_base_url, timeout=60) if docker_base_url else \
            docker.from_env(timeout=60)
    except DockerException:
        return 0
    try:
        return janitor(client)
    finally:
        client.close()


def janitor(client: docker.DockerClient, now: float | None = None) -> int:
    now = time.time() if now is None else now
    removed = 0
    try:
        containers = client.containers.list(all=True, filters={"label": LABEL})
    except (DockerException, OSError):
        return 0
    for container in containers:
        try:
            expires = float(container.labels.get(EXPIRES_LABEL, "0"))
        except ValueError:
            expires = 0.0
        # A pooled container that stopped (its worker died, so its job stream closed) can
        # never serve a job: no need to wait for its expiry.
        idle_pool_dead = container.labels.get(POOL_LABEL) == "1" and container.status in ("exited", "dead")
        if expires < now or idle_pool_dead or orphaned(container.labels):
            _remove(container)
            removed += 1
    return removed


def _kill(container: Container) -> None:
    try:
        container.kill()
    except (DockerException, OSError):
        pass


def _remove(container: Container) -> None:
    for _ in range(3):
        try:
            container.remove(force=True)
            return
        except NotFound:
            return
        except APIError as error:
            if "already in progress" in str(error):
                return
            time.sleep(0.2)
        except (DockerException, OSError):
            time.sleep(0.2)


def _wait_exit(container: Container) -> tuple[int | None, bool]:
    """The container's exit code and OOMKilled flag, once it stopped."""
    try:
        result = container.wait(timeout=30)
        container.reload()
        return result.get("StatusCode"), bool(container.attrs["State"].get("OOMKilled"))
    except (DockerException, OSError, KeyError):
        _kill(container)
        return None, False


# A container's fixed shape: memory (MB), pids, CPUs, tmpfs (MB), and the modules it preloads.
Shape = tuple[int, int, float, int, tuple[str, ...]]


class WarmPool:
    """Pre-started containers, each waiting for exactly one job with its modules imported.

    A pool exists per container shape (memory, pids, CPUs, tmpfs, and the modules preloaded:
    a numpy exercise should not pay for a torch import): those are fixed when a container
    starts. A background thread keeps ``size`` ready containers per shape it has
    seen, replaces each one taken, and treats a dead one (engine restart, OOM while idle)
    as missing: ``take`` returns None and the run starts cold.

    Refills run at a low CPU weight. When a job finds no ready container but one of its
    shape is being filled, the job takes that one over: it gets the normal weight at once
    and the job waits for it (at most ``CLAIM_WAIT_S``), since starting cold would only
    import the same modules a second time, at the same priority, beside it. Only one job
    waits for a given fill; any other starts cold.
    """

    MAX_SHAPES = 4
    CLAIM_WAIT_S = 15.0

    def __init__(self, sandbox: DockerSandbox, size: int, preload: Sequence[str], limits: Limits) -> None:
        self.sandbox = sandbox
        self.size = size
        self.preload = tuple(preload)
        self._ready: dict[Shape, deque[_Attached]] = {}
        self._shapes: dict[Shape, Limits] = {}
        self._lock = threading.Lock()
        self._ready_changed = threading.Condition(self._lock)
        self._filling: dict[Shape, _Attached] = {}  # the container being filled, per shape
        self._claimed: set[Shape] = set()  # shapes whose fill a job is waiting for
        self._wake = threading.Event()
        self._closed = False
        self.add_shape(limits, self.preload)
        self._thread = threading.Thread(target=self._fill_forever, name="sandbox-warm-pool", daemon=True)
        self._thread.start()

    @staticmethod
    def shape(limits: Limits, preload: Sequence[str]) -> Shape:
        return (limits.memory_mb, limits.pids, limits.cpus, limits.tmpfs_mb, tuple(preload))

    def add_shape(self, limits: Limits, preload: Sequence[str]) -> None:
        with self._lock:
            key = self.shape(limits, preload)
            if key not in self._shapes:
                if len(self._shapes) >= self.MAX_SHAPES:
                    oldest = next(iter(self._shapes))
                    del self._shapes[oldest]
                    for attached in self._ready.pop(oldest, ()):
                        self.sandbox.discard(attached)
                self._shapes[key] = limits
                self._ready.setdefault(key, deque())
        self._wake.set()

    def take(self, limits: Limits, options: RunOptions) -> _Attached | None:
        """A ready container of this shape that is still alive, or None (start cold)."""
        if options.gpus:
            return None  # GPU runs are rare and need device requests: always cold
        preload = options.preload or self.preload
        key = self.shape(limits, preload)
        if key not in self._shapes:
            self.add_shape(limits, preload)
            return None
        while True:
            with self._lock:
                queue = self._ready.get(key)
                attached = queue.popleft() if queue else self._claim(key)
            self._wake.set()
            if attached is None:
                return None
            if _alive(attached) and _prioritise(attached):
                return attached
            self.sandbox.discard(attached)

    def _claim(self, key: Shape) -> _Attached | None:
        """Take over the container being filled for ``key`` once it is ready (lock held)."""
        filling = self._filling.get(key)
        if filling is None or key in self._claimed:
            return None
        self._claimed.add(key)
        try:
            self._lock.release()
            try:
                _prioritise(filling)  # finish the import at a running grading's weight
            finally:
                self._lock.acquire()
            deadline = time.monotonic() + self.CLAIM_WAIT_S
            while not self._ready.get(key) and self._filling.get(key) is filling:
                left = deadline - time.monotonic()
                if left <= 0 or self._closed:
                    return None
                self._ready_changed.wait(left)
            queue = self._ready.get(key)
            return queue.popleft() if queue else None
        finally:
            self._claimed.discard(key)

    def idle_containers(self) -> list[Container]:
        """The containers waiting for a job (docker SDK objects)."""
        with self._lock:
            return [attached.container for queue in self._ready.values() for attached in queue]

    def wait_ready(self, timeout: float = POOL_READY_TIMEOUT_S) -> bool:
        """Block until every shape has ``size`` ready containers (for tests and benchmarks)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if all(len(self._ready.get(k, ())) >= self.size for k in self._shapes):
                    return True
            time.sleep(0.1)
        return False

    def close(self) -> None:
        self._closed = True
        self._wake.set()
        with self._lock:
            self._ready_changed.notify_all()
        self._thread.join(timeout=POOL_READY_TIMEOUT_S)
        with self._lock:
            leftovers = [a for q in self._ready.values() for a in q]
            self._ready.clear()
        for attached in leftovers:
            self.sandbox.discard(attached)

    def _missing(self) -> tuple[Shape, Limits] | None:
        with self._lock:
            for key, limits in self._shapes.items():
                queue = self._ready[key]
                for attached in list(queue):
                    if time.time() - attached.created > POOL_TTL_S / 2:
                        queue.remove(attached)
                        self.sandbox.discard(attached)
                if len(queue) < self.size:
                    return key, limits
        return None

    def _fill_forever(self) -> None:
        backoff = 1.0
        last_janitor = time.monotonic()
        while not self._closed:
            if time.monotonic() - last_janitor > 60:
                self.sandbox.janitor()
                self._drop_dead()
                last_janitor = time.monotonic()
            missing = self._missing()
            if missing is None:
                self._wake.wait(timeout=5.0)
                self._wake.clear()
                continue
            key, limits = missing
            attached: _Attached | None
            try:
                attached = self._start_one(key, limits)
            except (SandboxUnavailable, DockerException, OSError) as error:
                with self._lock:
                    self._filling.pop(key, None)
                    self._ready_changed.notify_all()
                log.warning("warm pool: cannot start a container (%s); retrying in %.0f s", error, backoff)
                self._wake.wait(timeout=backoff)
                self._wake.clear()
                backoff = min(backoff * 2, 30.0)
                continue
            backoff = 1.0
            with self._lock:
                if key in self._ready and not self._closed:
                    self._ready[key].append(attached)
                    attached = None
                self._filling.pop(key, None)
                self._ready_changed.notify_all()
            if attached is not None:
                self.sandbox.discard(attached)

    def _start_one(self, key: Shape, limits: Limits) -> _Attached:
        attached = self.sandbox.start(limits, RunOptions(), preload=key[4], pooled=True, lifetime_s=POOL_TTL_S)
        with self._lock:
            self._filling[key] = attached  # until _fill_forever files it as ready, or gives it up
        ended = attached.read_until(time.monotonic() + POOL_READY_TIMEOUT_S, 1024, stop_after=READY)
        if ended != "stop":
            self.sandbox.discard(attached)
            detail = bytes(attached.stderr).decode(errors="replace")[-500:]
            raise SandboxUnavailable(f"a pooled container never became ready ({ended}): {detail}")
        return attached

    def _drop_dead(self) -> None:
        with self._lock:
            pooled = [(k, a) for k, q in self._ready.items() for a in q]
        for key, attached in pooled:
            if not _alive(attached):
                with self._lock:
                    if attached in self._ready.get(key, ()):
                        self._ready[key].remove(attached)
                self.sandbox.discard(attached)


def _prioritise(attached: _Attached) -> bool:
    """Give a pooled container the CPU weight of a running grading; False if the engine refused."""
    try:
        attached.container.update(cpu_shares=RUNNING_CPU_SHARES)
    except (DockerException, OSError) as error:
        log.warning("warm pool: cannot raise a container's CPU weight (%s); starting cold", error)
        return False
    return True


def _alive(attached: _Attached) -> bool:
    try:
        attached.container.reload()
    except (DockerException, OSError):
        return False
    return attached.container.status == "running"
