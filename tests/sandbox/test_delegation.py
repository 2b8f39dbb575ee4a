"""What a sandbox lends its program for untrusted children: a uid of their own, and a cgroup it can freeze."""
from __future__ import annotations

import fcntl
import json
import os

import pytest

from sandbox import RunOptions
from sandbox.delegation import CHILD_CGROUP_DIR, TRUSTED_UID_OFFSET, UID_RANGE, UidLease, _lock_dir
from tests.sandbox.backends import python

# Run inside: a child moved into the lent cgroup (while root) and dropped to the lent uid is
# frozen as one with the cgroup, and cannot move itself out or thaw itself.
PROBE = r"""
import json, os, signal, time
uid = int(os.environ["SANDBOX_CHILD_UID"])
folder = os.environ.get("SANDBOX_CHILD_CGROUP")
report = {"uid": uid, "cgroup": folder, "twin": int(os.environ["SANDBOX_TRUSTED_UID"])}
if folder:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        for name in ("freezer", "pids", "cpuacct"):
            if not os.path.isdir(f"{folder}/{name}"):
                continue
            with open(f"{folder}/{name}/cgroup.procs", "w") as f:
                f.write(str(os.getpid()))
        os.setgroups([]); os.setresgid(uid, uid, uid); os.setresuid(uid, uid, uid)
        escapes = []
        writes = ((f"{folder}/freezer/freezer.state", "THAWED"), ("/proc/self/cgroup", ""),
                  (f"{folder}/pids/pids.max", "max"), (f"{folder}/cpuacct/cpuacct.usage", "0"))
        for path, text in writes:
            try:
                with open(path, "w") as f:
                    f.write(text)
                escapes.append(path)
            except OSError:
                pass
        os.write(write, json.dumps(escapes).encode())
        while True:
            time.sleep(0.01)
    report["child_could_write"] = json.loads(os.read(read, 4096))
    with open(f"{folder}/freezer/freezer.state", "w") as f:
        f.write("FROZEN")
    while open(f"{folder}/freezer/freezer.state").read().strip() != "FROZEN":
        time.sleep(0.001)
    report["frozen"] = open(f"{folder}/freezer/cgroup.procs").read().split() == [str(pid)]
    report["pids_current"] = int(open(f"{folder}/pids/pids.current").read())
    if os.path.isdir(f"{folder}/cpuacct"):  # the judge counts the CPU of tasks that ended here
        report["cpuacct_procs"] = open(f"{folder}/cpuacct/cgroup.procs").read().split() == [str(pid)]
    with open(f"{folder}/freezer/freezer.state", "w") as f:
        f.write("THAWED")
    os.kill(pid, signal.SIGKILL)
print(json.dumps(report))
"""


def test_each_sandbox_lends_its_own_uid_and_a_freezable_cgroup(sandbox):
    outcome = python(sandbox, PROBE, options=RunOptions(trusted=True))  # what the judge is lent
    assert outcome.status == "ok", outcome
    report = json.loads(outcome.stdout)
    assert report["uid"] in UID_RANGE
    assert report["twin"] == report["uid"] + TRUSTED_UID_OFFSET  # the reference's: never the student's
    if outcome.backend == "docker-runsc":
        assert report["cgroup"] is None  # gVisor has no freezer: the judge falls back to signals
        return
    assert report["cgroup"] == CHILD_CGROUP_DIR
    assert report["frozen"] and report["pids_current"] == 1
    assert report["child_could_write"] == []
    if os.path.isdir("/sys/fs/cgroup/cpuacct"):  # a v1 host with cpuacct lends it too
        assert report["cpuacct_procs"] is True


def test_concurrent_leases_get_different_uids_and_a_released_one_is_free_again():
    first, second = UidLease(), UidLease()
    try:
        assert first.uid != second.uid and {first.uid, second.uid} <= set(UID_RANGE)
        path = _lock_dir() / f"{first.uid}.lock"
        fd = os.open(path, os.O_RDWR)
        try:
            with pytest.raises(BlockingIOError):  # held: no other worker can take it
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            first.release()
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released with its descriptor
        finally:
            os.close(fd)
    finally:
        first.release()
        second.release()
