"""What a sandbox lends its program for the untrusted children it starts (see README).

- **A uid of their own**, unique among the sandboxes running on this host: the kernel
  counts some limits per uid across the whole host (RLIMIT_NPROC, pending signals,
  inotify instances, pipe buffers), so one sandbox's children must never share a uid
  with another's. Taken from ``UID_RANGE`` under an ``flock`` on a file per uid, so
  every worker process on the host sees the same leases, and a crashed worker's
  lease ends with its file descriptors.
- **A cgroup it may freeze** (cgroup v1 ``freezer`` and ``pids``, or one cgroup v2
  folder): the host makes ``graphdojo-child-*/`` (its ``pids.max`` is the run's pids
  limit, which nothing inside can raise) and lends its sub-folder ``box/``, mounted at
  ``CHILD_CGROUP_DIR/<controller>`` inside. The program moves its children there
  (``cgroup.procs``, before they drop to the lent uid) and freezes them all at once.
  gVisor has no freezer controller (its cgroupfs offers none, checked with runsc
  20221219), so under runsc no cgroup is lent and the program falls back to signals.

- **A second uid for trusted workers that need no root** (the judge's reference
  solution): the lent uid's twin, ``TRUSTED_UID_OFFSET`` above it, so it is as unique on
  the host as the lease that owns it, and never the untrusted processes' uid.

The program learns them from its environment: ``CHILD_UID_ENV``, ``TRUSTED_UID_ENV`` and,
when a cgroup is lent, ``CHILD_CGROUP_ENV`` (framing.py names them for both sides;
zygote.py's ``LentCgroup`` is how a program inside uses the cgroup).
"""
from __future__ import annotations

import fcntl
import os
import random
import tempfile
from pathlib import Path

from sandbox.cgroups import ChildCgroup
from sandbox.framing import CHILD_CGROUP_DIR, CHILD_CGROUP_ENV, CHILD_UID_ENV, TRUSTED_UID_ENV

UID_RANGE = range(200_000, 265_536)  # far from real users and from Docker's userns-remap default
TRUSTED_UID_OFFSET = 100_000  # the twins: 300000-365535
LOCK_DIRS = ("/run/graphdojo-uids", os.path.join(tempfile.gettempdir(), "graphdojo-uids"))


class UidLease:
    """One uid of ``UID_RANGE``, held (flock) until ``release()`` or the process ends."""

    def __init__(self) -> None:
        self._fd: int | None = None
        folder = _lock_dir()
        start = random.randrange(len(UID_RANGE))
        for step in range(len(UID_RANGE)):
            uid = UID_RANGE[(start + step) % len(UID_RANGE)]
            fd = os.open(folder / f"{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            self.uid, self._fd = uid, fd
            return
        raise RuntimeError("every uid of the sandbox range is in use")

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing drops the flock
            self._fd = None


def _lock_dir() -> Path:
    for candidate in LOCK_DIRS:
        try:
            os.makedirs(candidate, mode=0o700, exist_ok=True)
            if os.access(candidate, os.W_OK):
                return Path(candidate)
        except OSError:
            continue
    raise RuntimeError(f"no writable folder for uid leases among {LOCK_DIRS}")


class Delegation:
    """The uid and (where the host can make one) the cgroup lent to one sandbox."""

    def __init__(self, pids: int, with_cgroup: bool = True) -> None:
        self.uid = UidLease()
        self.cgroup = ChildCgroup.create(pids) if with_cgroup else None

    def env(self) -> dict[str, str]:
        env = {CHILD_UID_ENV: str(self.uid.uid), TRUSTED_UID_ENV: str(self.uid.uid + TRUSTED_UID_OFFSET)}
        if self.cgroup is not None:
            env[CHILD_CGROUP_ENV] = CHILD_CGROUP_DIR
        return env

    def mounts(self) -> dict[str, str]:
        """Host folder -> path inside the sandbox, to bind read-write."""
        if self.cgroup is None:
            return {}
        return {str(path): f"{CHILD_CGROUP_DIR}/{name}" for name, path in self.cgroup.lent.items()}

    def release(self) -> None:
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None
        self.uid.release()
