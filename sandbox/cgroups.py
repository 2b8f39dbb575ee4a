"""Cgroups the host makes per run (v1 or v2), where it may: a memory + pids cgroup for a
local sandbox, and the freezable child cgroup lent to any sandbox's program (delegation.py)."""
from __future__ import annotations

import os
import signal
import time
import uuid
from pathlib import Path

from sandbox.framing import CPUACCT, FREEZER, PIDS, UNIFIED

CPU_PERIOD_US = 100_000


def _mounts() -> dict[str, Path]:
    """Controller name ('memory', 'pids', 'cpu', 'cpuacct', 'freezer', or 'unified' for v2) -> mount point."""
    found: dict[str, Path] = {}
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        before, _, after = line.partition(" - ")
        fields, tail = before.split(), after.split()
        if len(tail) < 3:
            continue
        if tail[0] == "cgroup":
            for option in tail[2].split(","):
                if option in ("memory", "pids", "cpu", "cpuacct", "freezer"):
                    found.setdefault(option, Path(fields[4]))
        elif tail[0] == "cgroup2":
            found.setdefault("unified", Path(fields[4]))
    return found


def own_cgroup_paths() -> dict[str, str]:
    """Controller -> this process's cgroup path ('' key for v2)."""
    paths: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            paths[controller] = path
    return paths


def remove_stale(max_age_s: float = 3600.0) -> int:
    """Remove run cgroups left empty by a worker that was killed mid-run; returns how many."""
    removed = 0
    mounts, own = _mounts(), own_cgroup_paths()
    parents = [mounts[c] / own.get(c, "/").lstrip("/") for c in ("memory", "pids", "cpu", "freezer") if c in mounts]
    if "unified" in mounts:
        parents.append(mounts["unified"] / own.get("", "/").lstrip("/"))
    for parent in parents:
        for group in parent.glob("graphdojo-*"):
            try:
                if time.time() - group.stat().st_mtime > max_age_s and not _safe_read(group / "cgroup.procs").strip():
                    for nested in sorted((p for p in group.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
                        nested.rmdir()
                    group.rmdir()
                    removed += 1
            except OSError:
                continue
    return removed


class RunCgroup:
    """The cgroup(s) one sandbox lives in: limits memory (swap included), processes and CPU share."""

    def __init__(self, dirs: list[Path], version: int) -> None:
        self.dirs = dirs
        self.version = version

    @property
    def procs_files(self) -> list[str]:
        return [str(d / "cgroup.procs") for d in self.dirs]

    @classmethod
    def create(cls, memory_bytes: int, pids: int, cpus: float = 0.0) -> RunCgroup | None:
        """Make the cgroup with its limits, or None (no permission, no controller)."""
        try:
            mounts, own = _mounts(), own_cgroup_paths()
        except OSError:
            return None
        name = f"graphdojo-{uuid.uuid4().hex[:12]}"
        if "memory" in mounts and "pids" in mounts:
            return cls._create_v1(mounts, own, name, memory_bytes, pids, cpus)
        if "unified" in mounts:
            return cls._create_v2(mounts["unified"], own.get("", "/"), name, memory_bytes, pids, cpus)
        return None

    @classmethod
    def _create_v1(
        cls, mounts: dict[str, Path], own: dict[str, str], name: str, memory_bytes: int, pids: int, cpus: float
    ) -> RunCgroup | None:
        memory_dir = mounts["memory"] / own.get("memory", "/").lstrip("/") / name
        pids_dir = mounts["pids"] / own.get("pids", "/").lstrip("/") / name
        group = cls([memory_dir, pids_dir], 1)
        try:
            memory_dir.mkdir()
            pids_dir.mkdir()
            (memory_dir / "memory.limit_in_bytes").write_text(str(memory_bytes))
            # swap == memory, or a memory bomb swaps instead of meeting the OOM killer
            swap_limit = memory_dir / "memory.memsw.limit_in_bytes"
            if swap_limit.exists():
                swap_limit.write_text(str(memory_bytes))
            (pids_dir / "pids.max").write_text(str(pids))
        except OSError:
            group.remove()
            return None
        if cpus > 0 and "cpu" in mounts:  # a share, not a safety limit: best effort
            cpu_dir = mounts["cpu"] / own.get("cpu", "/").lstrip("/") / name
            try:
                cpu_dir.mkdir()
                group.dirs.append(cpu_dir)
                (cpu_dir / "cpu.cfs_period_us").write_text(str(CPU_PERIOD_US))
                (cpu_dir / "cpu.cfs_quota_us").write_text(str(int(cpus * CPU_PERIOD_US)))
            except OSError:
                pass
        return group

    @classmethod
    def _create_v2(
        cls, mount: Path, own_path: str, name: str, memory_bytes: int, pids: int, cpus: float
    ) -> RunCgroup | None:
        parent = mount / own_path.lstrip("/")
        try:
            available = (parent / "cgroup.controllers").read_text().split()
        except OSError:
            return None
        if "memory" not in available or "pids" not in available:
            return None
        group = cls([parent / name], 2)
        try:
            (parent / name).mkdir()
            (parent / name / "memory.max").write_text(str(memory_bytes))
            (parent / name / "memory.swap.max").write_text("0")
            (parent / name / "pids.max").write_text(str(pids))
            if cpus > 0 and "cpu" in available:
                (parent / name / "cpu.max").write_text(f"{int(cpus * CPU_PERIOD_US)} {CPU_PERIOD_US}")
        except OSError:
            group.remove()
            return None
        return group

    def _read(self, filename: str) -> str:
        for d in self.dirs:
            try:
                return (d / filename).read_text()
            except OSError:
                continue
        return ""

    @property
    def usage_file(self) -> str:
        """The file holding the bytes of memory the cgroup holds now."""
        return str(self.dirs[0] / ("memory.usage_in_bytes" if self.version == 1 else "memory.current"))

    @property
    def stat_file(self) -> str:
        """The file breaking that down (memory.stat): page cache apart from what processes hold."""
        return str(self.dirs[0] / "memory.stat")

    def peak_bytes(self) -> int:
        text = self._read("memory.max_usage_in_bytes" if self.version == 1 else "memory.peak")
        return int(text) if text.strip().isdigit() else 0

    def oom_kills(self) -> int:
        text = self._read("memory.oom_control" if self.version == 1 else "memory.events")
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill" and value.strip().isdigit():
                return int(value)
        # old v1 kernels have no oom_kill counter: hitting the limit is the best sign left
        failcnt = self._read("memory.failcnt")
        return 1 if self.version == 1 and failcnt.strip() not in ("", "0") and "oom_kill" not in text else 0

    def kill_all(self, recursive: bool = False) -> None:
        """SIGKILL every process left in the group, until it is empty (a fork bomb races us)."""
        for _ in range(100):
            dirs = [p for d in self.dirs for p in ([d, *d.rglob("*")] if recursive else [d]) if p.is_dir()]
            pids = {int(p) for d in dirs for p in _safe_read(d / "cgroup.procs").split()}
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.01)

    def remove(self) -> None:
        self.kill_all()
        for d in self.dirs:
            for _ in range(50):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)  # the last killed tasks are still leaving


class ChildCgroup:
    """The cgroup lent to a sandbox's program for its untrusted children (see delegation.py).

    Per controller, the host makes ``graphdojo-child-<id>/`` (v1: in ``freezer`` and
    ``pids``; v2: one folder) with ``pids.max`` set, and lends only its sub-folder
    ``box/``: root inside the sandbox owns ``box``'s files, so it can move its own
    processes in, freeze them and even lower ``box``'s limit, while the parent's limit,
    which is not mounted, bounds everything below it.
    """

    def __init__(self, parents: dict[str, Path]) -> None:
        self.parents = parents  # its folder's name inside the sandbox (FREEZER, PIDS or UNIFIED) -> host folder

    @property
    def lent(self) -> dict[str, Path]:
        return {name: parent / "box" for name, parent in self.parents.items()}

    @classmethod
    def create(cls, pids: int) -> ChildCgroup | None:
        """Make it, or None where the host cannot (not root, no freezer)."""
        try:
            mounts, own = _mounts(), own_cgroup_paths()
        except OSError:
            return None
        name = f"graphdojo-child-{uuid.uuid4().hex[:12]}"
        if "freezer" in mounts and "pids" in mounts:  # v1: each lent folder is named after its controller
            # cpuacct where the host has it: the judge reads the CPU of tasks born and ended in a
            # timed call there (v2's cpu.stat is in every folder). Only as a hierarchy of its own:
            # mounted with cpu, moving into it would take the student out of the run's CPU limit.
            own_cpuacct = "cpuacct" in mounts and mounts["cpuacct"] != mounts.get("cpu")
            controllers = (FREEZER, PIDS, CPUACCT) if own_cpuacct else (FREEZER, PIDS)
            parents = {c: mounts[c] / own.get(c, "/").lstrip("/") / name for c in controllers}
        elif "unified" in mounts and "freezer" not in mounts:
            parents = {UNIFIED: mounts["unified"] / own.get("", "/").lstrip("/") / name}
        else:
            return None
        group = cls({})
        try:
            for key, parent in parents.items():
                parent.mkdir()
                group.parents[key] = parent
                if key in (PIDS, UNIFIED):
                    if key == UNIFIED:
                        (parent / "cgroup.subtree_control").write_text("+pids")
                    (parent / "pids.max").write_text(str(pids))
                (parent / "box").mkdir()
        except OSError:
            group.remove()
            return None
        return group

    def remove(self) -> None:
        """Kill whatever is left (thawed first: a frozen task cannot die) and remove the folders."""
        trees = {name: sorted((p for p in [parent, *parent.rglob("*")] if p.is_dir()), key=lambda p: len(p.parts))
                 for name, parent in self.parents.items()}
        for name, tree in trees.items():
            for folder in tree:  # parents first: v1 refuses to thaw a child of a frozen parent
                try:
                    if name == FREEZER:
                        (folder / "freezer.state").write_text("THAWED")
                    elif name == UNIFIED:
                        (folder / "cgroup.freeze").write_text("0")
                except OSError:
                    pass
        RunCgroup(list(self.parents.values()), 1).kill_all(recursive=True)
        for tree in trees.values():
            for folder in reversed(tree):  # children first
                for _ in range(50):
                    try:
                        folder.rmdir()
                        break
                    except FileNotFoundError:
                        break
                    except OSError:
                        time.sleep(0.02)  # the last killed tasks are still leaving
        self.parents = {}


def _safe_read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""
