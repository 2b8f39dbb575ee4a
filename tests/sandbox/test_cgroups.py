"""sandbox/cgroups.py on this host's real cgroups: limits written, processes held, killed, removed."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sandbox.cgroups import RunCgroup, remove_stale


@pytest.fixture
def group(requires):
    made = RunCgroup.create(64 * 2**20, 16, 0.5)
    requires("a memory and pids cgroup for this process", made is not None, "run as root where cgroups are writable")
    yield made
    made.remove()


def join(group: RunCgroup, code: str) -> subprocess.Popen[bytes]:
    """A Python process that enters the cgroup before it runs ``code``, as the local backend's launcher does."""
    launcher = 'for f in $PROCS; do echo $$ > "$f" || exit 125; done; exec "$@"'
    return subprocess.Popen(["/bin/sh", "-c", launcher, "sh", sys.executable, "-c", code],
                            env={"PROCS": " ".join(group.procs_files), "PATH": os.environ["PATH"]})


def read(group: RunCgroup, name: str) -> str:
    return next((d / name).read_text().strip() for d in group.dirs if (d / name).exists())


def test_the_limits_are_written(group):
    assert int(read(group, "memory.limit_in_bytes" if group.version == 1 else "memory.max")) == 64 * 2**20
    assert read(group, "pids.max") == "16"
    assert all(d.name.startswith("graphdojo-") and d.is_dir() for d in group.dirs)


def test_memory_past_the_limit_meets_the_oom_killer(group):
    process = join(group, "x = bytearray(256 * 2**20); x[::4096] = b'1' * len(x[::4096])")
    assert process.wait(timeout=60) == -9
    assert group.oom_kills() > 0 and group.peak_bytes() >= 32 * 2**20


def test_kill_all_empties_the_group_and_remove_takes_it_away(group):
    process = join(group, "import os, time\nos.fork()\ntime.sleep(60)")
    time.sleep(1)
    assert len(read(group, "cgroup.procs").split()) >= 2
    group.kill_all()
    assert process.wait(timeout=10) == -9 and read(group, "cgroup.procs") == ""
    group.remove()
    assert not any(d.exists() for d in group.dirs)


def test_a_forgotten_empty_group_is_removed_and_a_fresh_one_kept(group):
    stale = RunCgroup.create(2**20, 4)
    assert stale is not None
    old = time.time() - 7200
    for d in stale.dirs:
        os.utime(d, (old, old))
    remove_stale(max_age_s=3600)
    assert not any(d.exists() for d in stale.dirs)
    assert all(Path(d).is_dir() for d in group.dirs)
