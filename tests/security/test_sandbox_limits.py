"""Hostile programs against the sandbox's limits, on docker-runc, docker-runsc and local.

Each gets the expected status and leaves the worker, the host and the next run untouched.
"""
from __future__ import annotations

import dataclasses
import resource
import threading
import time

import pytest

from tests.sandbox.backends import SMALL, assert_next_run_is_clean, python

# What the host may add to the wall limit: startup, the kill, the report.
HOST_SLACK_S = 6.0


@pytest.fixture(autouse=True)
def next_run_is_clean(sandbox):
    yield
    assert_next_run_is_clean(sandbox)


def test_busy_loop_is_stopped_at_its_cpu_limit(sandbox):
    started = time.monotonic()
    outcome = python(sandbox, "while True: pass")
    assert outcome.status == "timeout", outcome
    assert outcome.cpu_s >= SMALL.cpu_s * 0.9
    assert time.monotonic() - started < SMALL.wall_s + HOST_SLACK_S


def test_sleeping_forever_is_stopped_at_the_wall_clock(sandbox):
    started = time.monotonic()
    outcome = python(sandbox, "import time; time.sleep(10**6)")
    assert outcome.status == "timeout", outcome
    assert SMALL.wall_s * 0.9 <= outcome.wall_s < SMALL.wall_s + HOST_SLACK_S
    assert time.monotonic() - started < SMALL.wall_s + HOST_SLACK_S


def test_sigstop_of_itself_is_stopped_at_the_wall_clock(sandbox):
    outcome = python(sandbox, "import os, signal; os.kill(os.getpid(), signal.SIGSTOP)")
    assert outcome.status == "timeout", outcome


def test_memory_bomb_gets_the_memory_status(sandbox):
    outcome = python(sandbox, "chunks = []\nwhile True: chunks.append(bytearray(16 * 2**20))")
    assert outcome.status == "memory", outcome


def test_fork_bomb_is_contained_and_an_honest_run_beside_it_finishes(sandbox):
    bomb_outcome = {}
    bomb = threading.Thread(target=lambda: bomb_outcome.update(result=python(
        sandbox, "import os\nwhile True:\n    try: os.fork()\n    except OSError: pass")))
    bomb.start()
    time.sleep(1.0)
    started = time.monotonic()
    honest = python(sandbox, "print(sum(range(10**5)))")
    honest_s = time.monotonic() - started
    bomb.join()
    assert honest.status == "ok" and honest.stdout == b"4999950000\n", honest
    assert honest_s < 8.0
    # Contained either way: stopped at its CPU or wall limit, or (under gVisor, where every
    # forked process costs the sentry memory) at its memory limit. Never a sandbox failure.
    assert bomb_outcome["result"].status in ("timeout", "ok", "memory"), bomb_outcome["result"]


def test_ten_thousand_threads_are_refused_past_the_process_limit(sandbox):
    program = """
import threading, time
started = 0
try:
    for _ in range(10000):
        threading.Thread(target=time.sleep, args=(0.5,), daemon=True).start()
        started += 1
except RuntimeError:
    pass
print(started)
"""
    outcome = python(sandbox, program)
    assert outcome.status == "ok", outcome
    assert int(outcome.stdout) <= SMALL.pids


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_a_flood_is_cut_at_the_cap_without_growing_the_worker(sandbox, stream):
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    outcome = python(sandbox, f"import sys\nwhile True: sys.{stream}.write('x' * 65536)")
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before) / 1024
    assert outcome.status == "output_limit", outcome
    assert len(getattr(outcome, stream)) == SMALL.output_bytes
    assert getattr(outcome, f"{stream}_truncated")
    assert grown_mb < 32


def test_one_100_mb_line_is_cut_at_the_cap(sandbox):
    limits = dataclasses.replace(SMALL, memory_mb=384)
    outcome = python(sandbox, "import os; os.write(1, b'x' * 100_000_000)", limits)
    assert outcome.status == "output_limit", outcome
    assert outcome.stdout == b"x" * SMALL.output_bytes


def test_a_huge_output_file_is_left_out(sandbox):
    program = "open('out/small.txt', 'w').write('kept')\nopen('out/huge.bin', 'wb').write(b'x' * 12 * 2**20)"
    outcome = python(sandbox, program)
    assert outcome.status == "output_limit", outcome
    assert outcome.files_truncated
    assert outcome.files == {"out/small.txt": b"kept"}


def test_filling_tmp_and_the_work_folder_stops_at_the_tmpfs_size(sandbox):
    program = """
import errno
written = {}
for path in ('/tmp/fill', 'fill', 'out/fill'):
    written[path] = 0
    try:
        with open(path, 'wb') as f:
            while True:
                f.write(b'x' * 2**20); f.flush(); written[path] += 1
    except OSError as error:
        pass
print(max(written.values()))
"""
    outcome = python(sandbox, program)
    assert outcome.status in ("ok", "output_limit", "signal"), outcome
    if outcome.stdout:
        assert int(outcome.stdout) <= SMALL.tmpfs_mb


def test_abort_segfault_and_nonzero_exit_are_told_apart(sandbox):
    aborted = python(sandbox, "import os; os.abort()")
    crashed = python(sandbox, "import ctypes; ctypes.string_at(0)")
    failed = python(sandbox, "raise SystemExit(3)")
    assert (aborted.status, aborted.signal) == ("signal", 6), aborted
    assert (crashed.status, crashed.signal) == ("signal", 11), crashed
    assert (failed.status, failed.exit_code, failed.signal) == ("ok", 3, None), failed
