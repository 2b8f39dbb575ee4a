"""The CPU slice a simulated host gets (testbed.processes.CpuSlice, used by `python -m bench hosts`):
its quota is set, whatever its worker starts stays inside, and nothing is left after it."""
from __future__ import annotations

import os
import subprocess
import sys

from testbed.processes import CpuSlice, wait_for


def test_a_slice_holds_its_quota_and_every_descendant_then_leaves_nothing(requires):
    requires("a cgroup cpu controller to write", CpuSlice.available(), "run as root with cgroup v1 cpu or v2 cpu")
    with CpuSlice(f"gd-test-slice-{os.getpid()}", 0.25, reserved=True) as cpu_slice:
        if cpu_slice.version == 2:
            assert (cpu_slice.dirs[0] / "cpu.max").read_text().split() == ["25000", "100000"]
            assert (cpu_slice.dirs[0] / "cpu.weight").read_text().strip() == "10000"
        else:
            assert (cpu_slice.dirs[0] / "cpu.cfs_quota_us").read_text().strip() == "25000"
            assert (cpu_slice.dirs[0] / "cpu.shares").read_text().strip() == str(1024 * 100)
        # A parent that forks a grandchild, as a worker starts its pool and its sandboxes.
        parent = subprocess.Popen(
            [sys.executable, "-c", "import subprocess, sys, time\n"
             "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
             "print('started', flush=True)\ntime.sleep(600)"],
            stdout=subprocess.PIPE, text=True, preexec_fn=cpu_slice.join_this_process)
        assert parent.stdout is not None and parent.stdout.readline().strip() == "started"
        def members() -> set[int]:
            return {int(pid) for pid in (cpu_slice.dirs[0] / "cgroup.procs").read_text().split()}

        wait_for(lambda: len(members()) == 2, 30, "the parent and its child in the slice")
        assert parent.pid in members()
        assert cpu_slice.usage()["cpu_s"] > 0
    # Leaving the slice kills whatever was still inside, and removes its cgroups.
    assert parent.wait(30) == -9
    assert not any(folder.exists() for folder in cpu_slice.dirs)
