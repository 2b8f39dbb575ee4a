"""The lent cgroup as root inside a sandbox uses it (sandbox/runtime/lent_cgroup.py), on real
cgroups lent the way delegation.py lends them: one folder per controller under one folder."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from sandbox.runtime.lent_cgroup import LentCgroup
from sandbox.runtime.names import CHILD_CGROUP_ENV, CPUACCT, FREEZER, PIDS

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
