"""The cgroup a sandbox lends its program (sandbox/delegation.py), as root inside uses it:
move untrusted processes in, cap how many there may be, freeze and thaw them as one.

The host mounts the lent folder at ``CHILD_CGROUP_DIR`` (named in ``CHILD_CGROUP_ENV``),
one sub-folder per cgroup v1 controller (``freezer``, ``pids``, and ``cpuacct`` where the host
has it) or one v2 folder (``unified``). A process that root writes into ``cgroup.procs`` before it drops its uid can
never move itself out; freezing is one write that the kernel applies to every task inside
at once, and to any task forked from then on, so no fork slips through. Its CPU count covers
every task that was ever inside, those that ended too. Where no cgroup is
lent (gVisor, whose cgroupfs has no freezer) ``LentCgroup.lent()`` is None and the program
must fall back to signals.

Standard library only: this file travels into every sandbox with the bootstrap.
"""
from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path

from sandbox.runtime.names import CHILD_CGROUP_ENV, CPUACCT, FREEZER, PIDS, UNIFIED

_SETTLE_POLL_S = 0.0002


class LentCgroup:
    """The lent cgroup's folder inside the sandbox and what its files do."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.v2 = (folder / UNIFIED).is_dir()

    @classmethod
    def lent(cls, env: Mapping[str, str] = os.environ) -> LentCgroup | None:
        """The cgroup this sandbox lent, where this process may use it: it can freeze it, and
        a child can join it (a cgroup v2 namespace may refuse that: then every start of an
        untrusted process would fail, so it is better to have none). None where none is lent."""
        folder = env.get(CHILD_CGROUP_ENV, "")
        writable = bool(folder) and (
            os.access(os.path.join(folder, FREEZER, "freezer.state"), os.W_OK)
            or os.access(os.path.join(folder, UNIFIED, "cgroup.freeze"), os.W_OK)
        )
        if not writable:
            return None
        cgroup = cls(Path(folder))
        return cgroup if cgroup._can_join() else None

    def _can_join(self) -> bool:
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                for procs in self.join_files():
                    with open(procs, "w") as file:
                        file.write(str(os.getpid()))
                code = 0
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        return os.waitstatus_to_exitcode(status) == 0

    def _file(self, controller: str, name: str) -> Path:
        return self.folder / (UNIFIED if self.v2 else controller) / name

    def join_files(self) -> list[str]:
        """The cgroup.procs files a new process writes itself into (while still root)."""
        controllers = (FREEZER, PIDS) if self.v2 or not (self.folder / CPUACCT).is_dir() else (FREEZER, PIDS, CPUACCT)
        return sorted({str(self._file(c, "cgroup.procs")) for c in controllers})

    def limit_processes(self, count: int) -> None:
        """Cap the processes inside at ``count``: only ever lower, since the host's limit on the
        parent folder, which is not lent, bounds everything below it."""
        self._file(PIDS, "pids.max").write_text(str(count))

    def pids(self) -> list[int]:
        """Every process inside, read as root: the lent folder need not be readable by the
        processes it holds."""
        return [int(p) for p in _read(self._file(FREEZER, "cgroup.procs")).split()]

    def cpu_usage_ns(self) -> int | None:
        """Nanoseconds of CPU that every task ever inside has used (those that ended included),
        or None where the lent cgroup does not count it (a v1 host without cpuacct)."""
        if self.v2:
            for line in _read(self._file(UNIFIED, "cpu.stat")).splitlines():
                key, _, value = line.partition(" ")
                if key == "usage_usec" and value.strip().isdigit():
                    return int(value) * 1000
            return None
        usage = _read(self._file(CPUACCT, "cpuacct.usage")).strip()
        return int(usage) if usage.isdigit() else None

    def set_frozen(self, frozen: bool) -> None:
        if self.v2:
            self._file(FREEZER, "cgroup.freeze").write_text("1" if frozen else "0")
        else:
            self._file(FREEZER, "freezer.state").write_text("FROZEN" if frozen else "THAWED")

    def is_frozen(self) -> bool:
        if self.v2:
            return "frozen 1" in _read(self._file(FREEZER, "cgroup.events"))
        return _read(self._file(FREEZER, "freezer.state")).strip() == "FROZEN"

    def freeze(self, settle_s: float = 0.0) -> bool:
        """Freeze everything inside; with ``settle_s``, wait that long at most for the state to
        read frozen, and say whether it did. Waiting only matters before listing the tasks to
        kill: under load it costs a scheduling round per task, so a race does not wait."""
        self.set_frozen(True)
        deadline = time.monotonic() + settle_s
        while settle_s and not self.is_frozen():
            if time.monotonic() >= deadline:
                return False
            time.sleep(_SETTLE_POLL_S)
        return True

    def thaw(self) -> None:
        self.set_frozen(False)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""
