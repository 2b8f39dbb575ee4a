"""An eighth red team's attacks on the judge (round 8), on docker-runc, docker-runsc and local.

Each test plants one attack as a student would (its only input is the code it submits) and
asserts the SAFE outcome, so an attack that works is a failing test. The reviewer knew only
README.md and the code.

1. Run delay summed over tasks (grader/harness/programs.py ``window_time_ns``): a window's time is
   its tasks' CPU plus ``wall - cpu - sum(run delay of every task) - judge``, floored at 0. The run
   delay of tasks that wait for a CPU *at the same time* is counted once per task, so the sum can
   exceed the wall time; a student wakes many of its own processes at once, each for a sliver of
   CPU, and the queue they form (about N^2/4 slivers on two CPUs) is subtracted from the wall
   time, hiding the call's sleeping (waiting is the student's time, invariant 6). Worked on
   docker-runc and local (ACCEPTED at 2.5x for a call 16x the baseline's wall time); held on
   docker-runsc (the wall clock decides there). Closed: only the serving task's run delay is
   left out (tests/grader/harness/test_stopwatch.py).
2. The sandbox's memory filled to a few MB below its limit by a student child (runc shows the
   container's usage), so that the baseline refaults its libraries' pages. Held everywhere.
3. POSIX interval timers (1 us) left running in a child while the student is frozen: under gVisor
   the sentry keeps firing them and slows whatever runs (the baseline: 1.5-2x), but the student's
   own calls paid more (syscalls in a busy sentry). Held everywhere.
4. A process named "x\nUid:\t0" (prctl PR_SET_NAME): gVisor writes the name unescaped on the
   first line of /proc/<pid>/status, so the judge's ``_real_uid`` (grader/harness/programs.py)
   reads uid 0 and ``Family`` never lists it: never frozen, killed, or counted. Helpers that burn
   CPU while the worker is stopped slow the baseline. Worked on docker-runsc (a 3.6x-slow code
   ACCEPTED at 2.3-2.6x, by the median); held on docker-runc and local (the lent cgroup; Linux
   escapes the newline). Closed: status files are read past the last State line, after the name
   (``status_fields``).
5. The same forged uid against memory_held's ``others_stopped``: a helper fills 160 MB of memfds
   while the reference is measured. Worked on docker-runsc (checkpoint-rematerialise with a
   checkpoint that keeps every activation: ACCEPTED); held on docker-runc and local. Closed as 4.
"""
from __future__ import annotations

from grader.contract import Kind
from grader.host import grade, load_exercise
from tests.security.test_redteam_judge import SOLUTION, exercise, perf_case, summary
from tests.security.test_redteam_round3 import CHECKPOINT, failed
from tests.security.test_redteam_round5 import KEEPS_ONLY_THE_INPUTS

# --- 1. many tasks queued at once: their summed run delay hides the call's waiting ---------------
#
# work(n) sleeps 60 ms (15x the baseline's 4 ms of work; its wall time is 25x or more), then wakes
# HELPERS processes forked at import, each on a pipe of its own, all at once; each spins for a
# sliver and answers. Their CPU (~8 ms) is counted in full; their summed run delay (~100 ms,
# about N^2/4 slivers on 2 CPUs) is taken off the wall time as if it were load.
RUN_DELAY_HIDES_SLEEP = SOLUTION.split("def work")[0] + r'''
import os
import struct

HELPERS = 40
SLIVER_S = 0.0002
SLEEP_S = 0.06
_done_r, _done_w = os.pipe()
_wakes = []
for _ in range(HELPERS):
    r, w = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(r); os.close(w)
        break
    if pid == 0:
        while True:
            data = os.read(r, 8)
            if len(data) < 8:
                os._exit(0)
            # every helper sleeps until the same instant: their timers fire together
            time.sleep(max(0.0, struct.unpack("d", data)[0] - time.monotonic()))
            burn(SLIVER_S)
            os.write(_done_w, b"x")
    os.close(r)
    _wakes.append(w)

def work(n):
    at = struct.pack("d", time.monotonic() + SLEEP_S)
    for w in _wakes:
        os.write(w, at)
    got = 0
    while got < len(_wakes):
        got += len(os.read(_done_r, len(_wakes) - got))
    return n * 2
'''


def test_summed_run_delay_of_many_woken_tasks_does_not_hide_waiting(tmp_path, sandbox):
    verdict = grade(exercise(tmp_path), RUN_DELAY_HIDES_SLEEP, sandbox)
    assert verdict.verdict == Kind.TOO_SLOW, (summary(verdict), perf_case(verdict))


# --- 2. the sandbox's memory filled to its brim: the baseline pays for refaulting its code -------
#
# The student and the reference share the sandbox's memory limit (no swap). A child forked at
# import holds anonymous memory up to a few MB below the limit (on runc the container's own
# memory.usage_in_bytes says how far), topping up or giving back at the start of each of the
# student's calls. Every page the baseline's interpreter runs from (its libraries' text) must then
# be read again from disk, in the baseline's windows: an additive cost that pulls a 5x-slow
# student's ratio toward 1.
SQUEEZES_THE_BASELINE = SOLUTION.split("def work")[0] + r'''
import os

MARGIN = 6 * 2**20
CHUNK = 2**20
_ask_r, _ask_w = os.pipe()
_ok_r, _ok_w = os.pipe()

def _read(path):
    try:
        with open(path) as f:
            return int(f.read())
    except (OSError, ValueError):
        return None

def _filler():
    held = []
    while True:
        if not os.read(_ask_r, 1):
            os._exit(0)
        limit = _read("/sys/fs/cgroup/memory/memory.limit_in_bytes")
        usage = _read("/sys/fs/cgroup/memory/memory.usage_in_bytes")
        if limit and usage and limit < 2**40:
            room = limit - MARGIN - usage
            while room > CHUNK:
                try:
                    held.append(b"\x01" * CHUNK)
                except MemoryError:
                    break
                room -= CHUNK
            while room < 0 and held:
                held.pop()
                room += CHUNK
        os.write(_ok_w, b"x")

if os.fork() == 0:
    try:
        _filler()
    finally:
        os._exit(0)

def work(n):
    os.write(_ask_w, b"x")
    os.read(_ok_r, 1)
    burn(0.02)  # 5x the baseline's work
    return n * 2
'''


def test_a_student_filling_the_sandbox_memory_does_not_slow_the_baseline(tmp_path, sandbox):
    verdict = grade(exercise(tmp_path), SQUEEZES_THE_BASELINE, sandbox)
    assert verdict.verdict == Kind.TOO_SLOW, (summary(verdict), perf_case(verdict))


# --- 3. interval timers left running while the student is frozen slow the baseline ---------------
#
# Children forked at import each make TIMERS POSIX interval timers (their signal blocked). Each
# call kills the child whose timers ran since the last call (one syscall), does its (5x slow)
# work, and has the next child arm its timers (1 us period, first expiry 3 ms on) just before
# the call returns: they run while the student is stopped and the baseline is timed. Under
# gVisor an interval timer whose signal is still pending keeps firing (the sentry counts
# overruns) whether or not its process runs, and the sentry's timer work takes the sandbox's CPU
# from whatever runs then: the baseline, timed by the wall clock there. (Linux does not re-arm a
# timer whose signal is ignored or still pending, so runc and local only show the syscalls.)
TIMERS_SLOW_THE_BASELINE = SOLUTION.split("def work")[0] + r'''
import ctypes
import os
import signal

HOLDERS = 16
TIMERS = 50
PERIOD_NS = 1000
START_NS = 3_000_000
LIFE_NS = 25_000_000  # then a last timer ends the holder, stopped or not
SIG = 40
_libc = ctypes.CDLL(None, use_errno=True)

class _sigevent(ctypes.Structure):
    _fields_ = [("value", ctypes.c_void_p), ("signo", ctypes.c_int), ("notify", ctypes.c_int),
                ("pad", ctypes.c_byte * 48)]

class _itimerspec(ctypes.Structure):
    _fields_ = [("i_s", ctypes.c_long), ("i_ns", ctypes.c_long), ("v_s", ctypes.c_long), ("v_ns", ctypes.c_long)]

def _holder(go, ready):
    # its timers are made now, armed when told, and end with it (one kill, at the next call)
    signal.pthread_sigmask(signal.SIG_BLOCK, [SIG])
    event = _sigevent(None, SIG, 0)  # SIGEV_SIGNAL, blocked: it stays pending, the timer runs on
    timers = []
    for _ in range(TIMERS):
        timer = ctypes.c_void_p()
        if _libc.timer_create(1, ctypes.byref(event), ctypes.byref(timer)) != 0:
            break
        timers.append(timer)
    spec = _itimerspec(0, PERIOD_NS, 0, START_NS)  # first expiry once the call is over
    death = ctypes.c_void_p()
    alarm = _sigevent(None, signal.SIGALRM, 0)  # not blocked, no handler: it ends the holder
    _libc.timer_create(1, ctypes.byref(alarm), ctypes.byref(death))
    os.read(go, 1)
    _libc.timer_settime(death, 0, ctypes.byref(_itimerspec(0, 0, 0, START_NS + LIFE_NS)), None)
    for timer in timers:
        _libc.timer_settime(timer, 0, ctypes.byref(spec), None)
    os.write(ready, b"x")
    while True:
        signal.pause()

_ready_r, _ready_w = os.pipe()
_holders = []
for _ in range(HOLDERS):
    go_r, go_w = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        try:
            _holder(go_r, _ready_w)
        finally:
            os._exit(0)
    os.close(go_r)
    _holders.append((pid, go_w))
_armed = None

def work(n):
    global _armed
    if _armed is not None:  # ended by now, most likely; never reaped: its CPU is not added to ours
        os.kill(_armed, signal.SIGKILL)
        _armed = None
    burn(0.02)  # 5x the baseline's work
    if _holders:
        pid, go = _holders.pop(0)
        os.write(go, b"x")
        os.read(_ready_r, 1)
        _armed = pid
    return n * 2
'''


def test_timers_left_running_by_a_frozen_student_do_not_slow_the_baseline(tmp_path, sandbox):
    verdict = grade(exercise(tmp_path), TIMERS_SLOW_THE_BASELINE, sandbox)
    assert verdict.verdict == Kind.TOO_SLOW, (summary(verdict), perf_case(verdict))


# --- 4. a process that forges its real uid in /proc: never frozen, never counted ---------------
#
# Without a lent cgroup (gVisor) the judge finds the student's processes by the real uid on the
# first "Uid:" line of /proc/<pid>/status (programs.py ``_real_uid``). gVisor prints a process's
# name on the line before unescaped (Linux writes a newline in it as "\n"), and any process may
# name itself (prctl PR_SET_NAME, 15 bytes): "x\nUid:\t0" makes a line "Uid:\t0" come first, and
# the process reads as root's. The judge never signals it (not frozen, not killed), nor counts its
# ticks or resident memory. Here three such helpers, forked at import, burn CPU whenever the
# worker is stopped after a call (a flag in shared memory says when), that is while the baseline
# is timed (by the wall clock, under gVisor), and idle while the student runs. The baseline here
# is a fixed amount of CPU work, as real exercises' are.
CPU_SOLUTION = """\
def add(a, b):
    return a + b

def spin(count):
    total = 0
    for i in range(count):
        total += i
    return total

def work(n):
    spin(60000)  # the baseline: a fixed amount of CPU work
    return n * 2
"""
FORGED_UID_HELPERS = CPU_SOLUTION.replace("spin(60000)  # the baseline: a fixed amount of CPU work",
                                          "spin(300000)  # 5x the baseline's work") + r'''
import ctypes
import mmap
import os
import time

HELPERS = 3
_worker = os.getpid()
_libc = ctypes.CDLL(None, use_errno=True)
_go = mmap.mmap(-1, 1)  # shared with the helpers: 1 from the end of a call to the start of the next

def _state(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            stat = file.read()
    except OSError:
        return None
    return stat[stat.rfind(b")") + 2:].split()[0]

def _helper():
    _libc.prctl(15, b"x\nUid:\t0", 0, 0, 0)  # PR_SET_NAME: /proc/self/status now says uid 0 first
    while True:
        state = _state(_worker)
        if state is None or state == b"Z":
            os._exit(0)
        if state == b"T" and _go[0]:  # the student is frozen after a call: the baseline is timed
            end = time.perf_counter() + 0.0005
            while time.perf_counter() < end and _go[0]:
                pass
        else:
            time.sleep(0.001)

for _ in range(HELPERS):
    if os.fork() == 0:
        try:
            _helper()
        finally:
            os._exit(0)

_work = work

def work(n):
    _go[0] = 0
    try:
        return _work(n)
    finally:
        _go[0] = 1
'''


def cpu_exercise(tmp_path):
    return exercise(tmp_path, solution=CPU_SOLUTION)


def test_a_process_that_forges_its_uid_in_proc_is_still_frozen(tmp_path, sandbox):
    verdict = grade(cpu_exercise(tmp_path), FORGED_UID_HELPERS, sandbox)
    assert verdict.verdict == Kind.TOO_SLOW, (summary(verdict), perf_case(verdict))


# --- 5. the same forged uid, against the memory measure: a helper is not stopped ----------------
#
# checkpoint-rematerialise compares what the student's worker holds with what the reference's
# holds, each the growth of the whole sandbox's charge; memory_held stops the student's family
# while the reference is measured (round 5). Under gVisor that family is whatever /proc/<pid>/status
# says runs under the lent uid: a helper the worker starts at import (a small interpreter) names
# itself "x\nUid:\t0", so it is never stopped. The checkpoint keeps every activation (the plain
# block), and once its backward ran, the helper waits for the worker to be stopped (the judge is
# about to start and measure the reference), 0.3 s more, and fills memfds then: want_held grows
# past the student's.
FORGED_UID_INFLATES_THE_REFERENCE = r'''
import os
import sys

import torch

# The helper: a small interpreter of its own (a fork of a torch worker would cost its copies).
HELPER = """
import ctypes, os, sys, time

ctypes.CDLL(None).prctl(15, b"x\\nUid:\\t0", 0, 0, 0)  # PR_SET_NAME: read as root's, never stopped
told = int(sys.argv[1])
worker = os.getppid()  # once it is gone (a fresh worker replaced it), this helper has nothing to do

def worker_state():
    try:
        with open(f"/proc/{worker}/stat", "rb") as file:
            stat = file.read()
    except OSError:
        sys.exit()
    return stat[stat.rfind(b")") + 2:].split()[0]

if os.read(told, 1):  # backward ran in the worker (its end closes the pipe: nothing to do)
    while worker_state() != b"T":  # stopped: the judge is about to start and measure the reference
        if os.getppid() != worker:
            sys.exit()
        time.sleep(0.001)
    time.sleep(DELAY)
    held = []
    for _ in range(CHUNKS):  # in memfds
        fd = os.memfd_create("ballast")
        os.write(fd, b"\\0" * (8 << 20))
        held.append(fd)
        time.sleep(0.01)
    time.sleep(10)
""".replace("DELAY", "0.3").replace("CHUNKS", "20")

_told_r, _told_w = os.pipe()
os.set_inheritable(_told_r, True)
if os.fork() == 0:
    os.close(_told_w)
    os.execv(sys.executable, [sys.executable, "-S", "-c", HELPER, str(_told_r)])
os.close(_told_r)


def _ran(grad):
    os.write(_told_w, b"x")
    return grad


def checkpoint(fn, *args):
    out = fn(*args)  # keeps every activation, as running plainly does
    if out.requires_grad:
        out.register_hook(_ran)
    return out
'''


def test_a_helper_that_forges_its_uid_is_still_stopped_while_the_reference_is_measured(tmp_path, sandbox):
    verdict = grade(load_exercise(CHECKPOINT), FORGED_UID_INFLATES_THE_REFERENCE, sandbox)
    assert KEEPS_ONLY_THE_INPUTS in failed(verdict), summary(verdict)
    assert verdict.verdict != Kind.ACCEPTED, summary(verdict)
