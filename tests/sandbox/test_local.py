"""The bubblewrap backend: what it refuses, its unisolated development mode, its cgroup."""
from __future__ import annotations

import dataclasses
import os
import signal
import threading
from pathlib import Path

import pytest

from sandbox import SandboxUnavailable, get_sandbox
from sandbox.cgroups import RunCgroup
from sandbox.local import UNISOLATED_NOTE, LocalSandbox
from tests.sandbox.backends import SMALL, backend_sandbox


@pytest.fixture
def local(requires) -> LocalSandbox:
    return backend_sandbox("local", requires)


def test_without_bubblewrap_it_refuses_untrusted_code():
    with pytest.raises(SandboxUnavailable, match="bubblewrap"):
        get_sandbox("local", bwrap="/nonexistent/bwrap")


def test_unisolated_mode_runs_but_says_so_on_every_outcome():
    sandbox = get_sandbox("local", bwrap="/nonexistent/bwrap", allow_unisolated=True)
    assert sandbox.isolated is False  # the grading pipeline tells its judge so
    outcome = sandbox.run({"main.py": b"print(open('main.py').read()[:5]); open('out/r', 'w').write('1')"},
                          ["python3", "main.py"], SMALL)
    assert outcome.status == "ok", outcome
    assert outcome.stdout == b"print\n" and outcome.files == {"out/r": b"1"}
    assert UNISOLATED_NOTE in outcome.notes
    slow = sandbox.run({}, ["python3", "-c", "while True: pass"], SMALL)
    assert slow.status == "timeout" and UNISOLATED_NOTE in slow.notes


def test_the_sandbox_sees_no_host_files_and_cannot_write_its_system(local):
    marker = Path("/tmp") / f"graphdojo-host-marker-{os.getpid()}"
    marker.write_text("host")
    try:
        program = f"""
import os
print(os.path.exists({str(marker)!r}), os.path.exists('/etc/shadow'), os.path.exists('/root/.ssh'),
      os.path.exists('/sys/kernel'))
for path in ('/usr/x', '/etc/x', '/x', {os.path.dirname(os.path.abspath(__file__))!r} + '/x'):
    try:
        open(path, 'w'); print('wrote', path)
    except OSError as error:
        print(error.errno)
"""
        outcome = local.run({}, ["python3", "-c", program], SMALL)
    finally:
        marker.unlink()
    lines = outcome.stdout.decode().splitlines()
    assert lines[0] == "False False False False"
    assert not any(line.startswith("wrote") for line in lines[1:]), lines


def test_memory_and_processes_are_capped_by_a_cgroup_that_goes_away(local, monkeypatch):
    made: list[RunCgroup] = []
    create = RunCgroup.create

    def recorded(*args, **kwargs):  # only this run's cgroup: other sandboxes on the host come and go
        group = create(*args, **kwargs)
        made.extend([group] if group is not None else [])
        return group

    monkeypatch.setattr(RunCgroup, "create", staticmethod(recorded))
    outcome = local.run({}, ["python3", "-c", "x = bytearray(400 * 2**20)"], SMALL)
    assert outcome.status == "memory", outcome
    assert not any("rlimits only" in note for note in outcome.notes)
    assert len(made) == 1 and made[0].dirs, made
    assert [d for d in made[0].dirs if d.exists()] == []


def test_a_killed_worker_takes_its_sandbox_with_it(local, tmp_path):
    """--die-with-parent: a sandbox never outlives the process that started it."""
    marker = f"graphdojo-orphan-{os.getpid()}"
    child = os.fork()
    if child == 0:  # a worker that dies mid-run
        threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGKILL)).start()
        local.run({}, ["sh", "-c", f"sleep 30 # {marker}"], SMALL)
        os._exit(0)
    os.waitpid(child, 0)
    import time

    time.sleep(0.5)
    survivors = [p for p in Path("/proc").iterdir() if p.name.isdigit() and marker.encode() in _cmdline(p)]
    assert survivors == []


def _cmdline(proc: Path) -> bytes:
    try:
        return (proc / "cmdline").read_bytes()
    except OSError:
        return b""


def test_the_cpu_share_holds_several_busy_processes_to_it(local):
    limits = dataclasses.replace(SMALL, cpus=0.5, cpu_s=5.0, wall_s=5.0)
    two_loops = "(while :; do :; done) & (while :; do :; done) & sleep 1.5; kill %1 %2"
    outcome = local.run({}, ["sh", "-c", two_loops], limits)
    assert outcome.status == "ok", outcome
    assert outcome.cpu_s < 1.5 * 0.5 * 1.3  # two loops, half a CPU between them
