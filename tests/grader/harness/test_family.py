"""Freezing the student's processes as one, on real cgroups: the v1 freezer and cgroup v2's
``cgroup.freeze`` (this host mounts both; production hosts have one or the other)."""
from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from grader.harness.programs import Family
from sandbox.zygote import LentCgroup

V1 = Path("/sys/fs/cgroup/freezer")
V2 = Path("/sys/fs/cgroup/unified")
NOBODY = 65534
BUSY = "while :; do :; done & while :; do :; done"  # the shell and a child, both only burning CPU


def _cpu_ticks(pid: int) -> int:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])


def _progress(pids: list[int], seconds: float = 0.6) -> int:
    before = {pid: _cpu_ticks(pid) for pid in pids}
    time.sleep(seconds)
    return sum(_cpu_ticks(pid) - ticks for pid, ticks in before.items())


@pytest.fixture(params=["v1", "v2"])
def family(request, requires):
    requires("root, to make cgroups", os.geteuid() == 0, "run the tests as root (CI does)")
    name = f"graphdojo-test-{uuid.uuid4().hex[:8]}"
    # As in a sandbox, the lent folder is one the student's uid can read (pytest's tmp_path is not).
    folder = Path(tempfile.mkdtemp(prefix="lent-"))
    folder.chmod(0o755)
    if request.param == "v1":
        requires("the cgroup v1 freezer", V1.is_dir(), "mount the freezer hierarchy")
        made = [V1 / name]
        (folder / "freezer").symlink_to(made[0])
    else:
        requires("cgroup v2 (the unified hierarchy)", (V2 / "cgroup.procs").exists(), "mount cgroup2")
        made = [V2 / name]
        (folder / "unified").symlink_to(made[0])
    made[0].mkdir()
    family = Family(trusted=set, cgroup=LentCgroup(folder))
    joined = made[0] / "cgroup.procs"

    def enter() -> None:  # runs in the child: into the cgroup, then nobody
        joined.write_text(str(os.getpid()))
        os.setgid(NOBODY)
        os.setuid(NOBODY)

    process = subprocess.Popen(["/bin/sh", "-c", BUSY], preexec_fn=enter, start_new_session=True)
    deadline = time.monotonic() + 10
    while len(family.pids()) < 2 and time.monotonic() < deadline:  # sh and its background loop
        time.sleep(0.02)
    family.process = process
    yield family
    try:
        family.kill()
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)  # whatever the family did, nothing is left burning
        except ProcessLookupError:
            pass
        process.wait(timeout=10)
        shutil.rmtree(folder)
        for cgroup in made:
            for _ in range(50):
                try:
                    cgroup.rmdir()
                    break
                except OSError:
                    time.sleep(0.05)


def test_a_frozen_family_runs_nothing_until_thawed(family):
    pids = family.pids()
    assert len(pids) >= 2, pids
    assert _progress(pids) > 0  # running
    family.freeze(settle=True)
    assert _progress(pids) == 0  # not one tick of CPU while frozen
    family.thaw()
    assert _progress(pids) > 0


def test_killing_a_family_leaves_nothing_in_its_cgroup(family):
    assert family.pids()
    family.cgroup.folder.chmod(0o700)  # a lent folder only root may read: the kill must not depend on it
    family.kill()
    family.process.wait(timeout=10)  # the shell's zombie is reaped by its parent, this test
    deadline = time.monotonic() + 5
    while family.pids() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert family.pids() == []


def test_without_a_cgroup_a_freeze_waits_for_the_child_a_listing_missed(monkeypatch):
    """gVisor (no freezer) finishes a fork under a pending SIGSTOP: the parent reads stopped
    in a listing that missed the child it made meanwhile (the folder was listed before). The
    freeze must not count until a second listing finds the same processes, all stopped."""
    from grader.harness import programs

    parent, child = 101, 102
    killed: dict[int, int] = {}  # pid -> listings seen since its SIGSTOP
    uid = 4242

    def listing():
        for pid in killed:
            killed[pid] += 1
        if parent not in killed or killed[parent] <= 1:
            return [(parent, b"R", 1)]  # running, forking; the stop still pending
        if killed[parent] == 2:
            return [(parent, b"T", 1)]  # stopped, the fork done: the child came after the folder was read
        return [(parent, b"T", 1), (child, b"T" if child in killed else b"R", parent)]

    def kill(pid, signum):
        assert signum == signal.SIGSTOP
        killed.setdefault(pid, 0)

    monkeypatch.setattr(programs, "privileged", lambda: True)
    monkeypatch.setattr(programs, "student_uid", lambda: uid)
    monkeypatch.setattr(programs, "_real_uid", lambda pid: uid)
    monkeypatch.setattr(programs, "_processes", listing)
    monkeypatch.setattr(programs, "_as_student", contextlib.nullcontext)
    monkeypatch.setattr(programs.os, "kill", kill)
    Family(trusted=set).freeze()
    assert child in killed, "the freeze counted while the child ran"


def test_a_name_with_newlines_cannot_forge_the_fields_of_a_status_file():
    # gVisor writes a process's name raw (Linux escapes the newline), as a process named
    # "x\nState:\tZ\nUid:\t0" showed under runsc; the real fields follow.
    from grader.harness.programs import status_fields

    text = ("Name:\tx\nState:\tZ\nUid:\t0\nState:\tR (running)\nTgid:\t7\nPid:\t7\nPPid:\t1\n"
            "Uid:\t4242\t4242\t4242\t4242\nVmRSS:\t14772 kB\n")
    fields = status_fields(text)
    assert fields["Uid"].split()[0] == "4242" and fields["State"].startswith("R"), fields
    assert "RssAnon" not in status_fields(text.replace("Name:\tx\n", "Name:\tx\nRssAnon:\t0 kB\n"))
