"""A ninth red team's attacks on the judge (round 9), on docker-runc, docker-runsc and local.

Each test plants one attack as a student would (its only input is the code it submits) and
asserts the SAFE outcome, so an attack that works is a failing test. The reviewer knew only
README.md and the code. Goal: slow code ranked first. Found (failing tests):

1. ``window_time_ns`` (grader/harness/programs.py) subtracts ``judge_ns``, the judge's CPU and run
   delay over the WHOLE Stopwatch window, from ``wall``, which covers only the exchanges. What the
   judge does outside them (thaw, encoding and fingerprinting the arguments, decoding the reply,
   freeze, and Stopwatch.__exit__'s own /proc reading of every student task) is taken off the
   student's waiting. 60 idle processes make that reading cost ~5 ms a call: a 14 ms sleep (3.3x
   the baseline's wall time) ACCEPTED at 2.5-2.7x; on vectorise-a-loop a softmax 6x the
   reference's wall time passed "close to the reference" (at most 2.5x) at 1.8-2.2x. docker-runc
   and local; held on docker-runsc (wall clock; the forks there run out of memory).
7. The median decides (grader/harness/stats.py): code slow (15x) on one call in three passes at
   1.03x on a first attempt, and slow on four calls in nine passes "by the median" at ~1.1x on the
   second; the board takes that ratio. All three backends.

Held: a helper thread's long system call past the freeze (2), a process whose main thread
exited reading Z (3), kernel work past the freeze against a memory-bound baseline (4), the
container throttled while the judge reads /proc (5). Helpers ending inside a window under gVisor
(6) held while the machine was busy, but on two idle cores passed at 1.75-1.99x against 2x: a
gap left open on gVisor (README; the tests run where a cgroup counts the family's CPU).
1 and 7 are closed: the judge's share is read inside the exchanges only, and a pass needs the
totals' ratio too.
"""
from __future__ import annotations

import pytest

from grader.contract import Kind
from grader.host import grade, load_exercise
from tests.grader.factories import REPO
from tests.sandbox.backends import backend_sandbox
from tests.security.test_redteam_judge import PERF_TOML, SOLUTION, exercise, perf_case, summary

# --- 1. the judge's own bookkeeping after the call is taken off the student's waiting ----------
#
# A window's time is cpu + max(0, wall - cpu - caller's run delay - judge_ns), where wall covers
# only the exchanges but judge_ns is the judge's CPU (and run delay) over the WHOLE window:
# thaw, encoding the arguments, decoding the reply, freeze and Stopwatch.__exit__'s own reading
# of /proc (each task's schedstat, each process's task folder and stat) all fall outside wall
# yet are subtracted from it. A student that keeps the pids cap full of idle processes makes
# that /proc reading cost the judge milliseconds per call, and sleeps that long for free.
# work(n) sleeps 14 ms (3.5x the baseline's 4 ms of work, over the 3x threshold).
SLEEP_S = 0.014
HONEST_SLEEPER = SOLUTION.split("def work")[0] + f'''
def work(n):
    time.sleep({SLEEP_S})
    return n * 2
'''
BOOKKEEPING_HIDES_SLEEP = SOLUTION.split("def work")[0] + f'''
import os

_idle_r, _idle_w = os.pipe()
for _ in range(62):
    try:
        if os.fork() == 0:
            os.close(_idle_w)
            os.read(_idle_r, 1)  # idle for good: no CPU, only /proc files for the judge to read
            os._exit(0)
    except OSError:
        break

def work(n):
    time.sleep({SLEEP_S})
    return n * 2
'''


@pytest.fixture(params=["docker-runc", "local"])
def cpu_clock_sandbox(request, requires):
    """The backends where a CPU clock decides and a cgroup counts the family's CPU. On gVisor each
    call's fixed wall-clock overhead, about 1 ms on both sides, puts a 3.5x sleeper at the
    threshold, so a control means nothing there."""
    return backend_sandbox(request.param, requires)


def test_an_honest_sleeper_is_too_slow(tmp_path, cpu_clock_sandbox):
    """The control of attack 1."""
    sandbox = cpu_clock_sandbox
    verdict = grade(exercise(tmp_path), HONEST_SLEEPER, sandbox)
    assert verdict.verdict == Kind.TOO_SLOW, (summary(verdict), perf_case(verdict))


def test_the_judges_reading_of_many_idle_processes_does_not_hide_waiting(tmp_path, sandbox):
    # (under gVisor the 62 forks run out the sandbox's memory: that, too, is no pass)
    verdict = grade(exercise(tmp_path), BOOKKEEPING_HIDES_SLEEP, sandbox)
    assert verdict.verdict != Kind.ACCEPTED, (summary(verdict), perf_case(verdict))
    assert verdict.verdict in (Kind.TOO_SLOW, Kind.MEMORY_LIMIT), (summary(verdict), perf_case(verdict))


# Kernel work in one long system call: ``_populate()`` maps SIZE bytes populated (the kernel
# zeroes every page) and unmaps them; ``_churn`` does it in a thread each time ``_go`` is
# released. Shared by attacks 2 to 5.
LIBC_MMAP = r'''
import ctypes

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]

def _populate():
    at = _libc.mmap(None, SIZE, 3, 0x22 | 0x8000, -1, 0)  # private, anonymous, populated
    if at and at != ctypes.c_void_p(-1).value:
        _libc.munmap(at, SIZE)
'''
MMAP_CHURN = LIBC_MMAP + r'''
import threading

_go = threading.Semaphore(0)

def _churn():
    while True:
        _go.acquire()
        _populate()
'''


# --- 2. a thread inside a long system call runs on while its process reads as stopped ---------
#
# Without a cgroup (gVisor) a freeze counts once every student process reads stopped in
# /proc/<pid>/stat, which is the state of its main thread. A helper thread of the worker starts
# a long system call (an mmap of 64 MB with MAP_POPULATE, then its munmap) just before the call
# returns: the main thread stops at once, the freeze counts, and the helper goes on using the
# sandbox's one CPU of quota while the baseline is timed by the wall clock. With the cgroup
# (runc, local) the freeze is one write that does not wait for the tasks to settle, so the same
# kernel work runs on past it there too. The work itself is 4x the baseline's.
POPULATE_PAST_THE_FREEZE = SOLUTION.split("def work")[0] + r'''
SIZE = 64 * 2**20
''' + MMAP_CHURN + r'''

threading.Thread(target=_churn, daemon=True).start()

def work(n):
    burn(0.016)
    _go.release()
    return n * 2
'''


def test_a_thread_in_a_long_system_call_does_not_slow_the_baseline(tmp_path, sandbox):
    verdict = grade(exercise(tmp_path), POPULATE_PAST_THE_FREEZE, sandbox)
    assert verdict.verdict == Kind.TOO_SLOW, (summary(verdict), perf_case(verdict))


# --- 3. a helper whose main thread has exited reads as a zombie while its thread runs on --------
#
# The freeze without a cgroup (gVisor) counts a process as stopped when /proc/<pid>/stat says
# T, t, Z, X or D; that state is the main thread's. A child forked at import starts a thread and
# ends its main thread (pthread_exit): the process reads Z from then on. Its thread, told at the
# end of each call, runs a long system call (a populated 64 MB mmap and its munmap), so SIGSTOP
# reaches it only once that is done, while the freeze already counted and the baseline is timed
# by the wall clock on the sandbox's one CPU of quota. The work itself is 4x the baseline's.
ZOMBIE_LEADER_PAST_THE_FREEZE = SOLUTION.split("def work")[0] + r'''
import os
import threading

SIZE = 16 * 2**20
''' + LIBC_MMAP + r'''
_go_r, _go_w = os.pipe()

def _churn():
    while True:
        if not os.read(_go_r, 1):
            os._exit(0)
        _populate()

if os.fork() == 0:
    os.close(_go_w)
    threading.Thread(target=_churn).start()
    _libc.pthread_exit(None)  # the main thread ends; the process reads as a zombie
os.close(_go_r)

def work(n):
    burn(0.016)
    os.write(_go_w, b"x")
    return n * 2
'''


def test_a_process_whose_main_thread_ended_is_still_frozen(tmp_path, sandbox):
    verdict = grade(exercise(tmp_path), ZOMBIE_LEADER_PAST_THE_FREEZE, sandbox)
    assert verdict.verdict == Kind.TOO_SLOW, (summary(verdict), perf_case(verdict))


# --- 4. kernel work left running past the freeze contends with a memory-bound baseline ---------
#
# With the cgroup (runc, local) a race freezes the student with one write and does not wait for
# it to settle; a task inside a long system call freezes only when it returns. The baseline here
# streams 32 MB per call (memory-bound, so its CPU time grows when another core floods the
# memory bus). The student does the same work 3.5 times per call, then has a helper thread map
# 96 MB populated (the kernel zeroes every page) and unmap it: that runs on past the freeze, on
# the other core, while the baseline is timed.
MEMORY_BOUND_SOLUTION = """\
import numpy as np

_data = np.ones(2**22)

def add(a, b):
    return a + b

def work(n):
    return n * 2 + int(_data.sum()) * 0
"""
ZEROING_PAST_THE_FREEZE = r'''
import numpy as np

SIZE = 96 * 2**20
''' + MMAP_CHURN + r'''
_data = np.ones(2**22)

threading.Thread(target=_churn, daemon=True).start()

def add(a, b):
    return a + b

def work(n):
    total = 0
    for _ in range(3):
        total += int(_data.sum())
    total += int(_data[: 2**21].sum())
    _go.release()
    return n * 2 + total * 0
'''
def test_kernel_work_left_running_past_the_freeze_does_not_slow_the_baseline(tmp_path, sandbox):
    verdict = grade(exercise(tmp_path, solution=MEMORY_BOUND_SOLUTION), ZEROING_PAST_THE_FREEZE, sandbox)
    assert verdict.verdict == Kind.TOO_SLOW, (summary(verdict), perf_case(verdict))


# --- 5. the container throttled while the judge reads /proc: its run delay hides the sleep ------
#
# judge_ns (subtracted from the student's wall) includes the judge's run delay over the whole
# window. The sandbox has one CPU of quota for everything in it. Helper threads start long
# kernel work (populated mmaps) as the call returns; it runs past the freeze (one write that
# does not wait) on the other core, drains the quota, and the judge, reading /proc in
# Stopwatch.__exit__ for the student's many idle processes, waits throttled: its run delay is
# taken off the student's 14 ms sleep.
THROTTLED_JUDGE_HIDES_SLEEP = BOOKKEEPING_HIDES_SLEEP.split("def work")[0].replace("range(62)", "range(56)") + r'''
SIZE = 48 * 2**20
''' + MMAP_CHURN + r'''

for _ in range(2):
    threading.Thread(target=_churn, daemon=True).start()

def work(n):
    time.sleep(SLEEP_S)
    _go.release()
    _go.release()
    return n * 2
'''.replace("SLEEP_S", repr(SLEEP_S))


def test_a_throttled_judge_does_not_hide_waiting(tmp_path, sandbox):
    verdict = grade(exercise(tmp_path), THROTTLED_JUDGE_HIDES_SLEEP, sandbox)
    assert verdict.verdict != Kind.ACCEPTED, (summary(verdict), perf_case(verdict))


# --- 1b. the same on a real exercise: vectorise-a-loop's "close to the reference" (at most 2.5x) --
#
# The reference's softmax of a 512x32 batch takes well under a millisecond, so the judge's
# bookkeeping for 60 idle processes hides a sleep several times the baseline's whole call.
VECTORISE = REPO / "exercises" / "coding" / "vectorise-a-loop"
EXTRA_SLEEP_S = 0.004
SLEEPY_SOFTMAX = (VECTORISE / "solution.py").read_text().replace(
    "def softmax(x):\n", f"def softmax(x):\n    time.sleep({EXTRA_SLEEP_S})\n", 1) + "\nimport time\n"
SLEEPY_SOFTMAX_BESIDE_IDLE_PROCESSES = SLEEPY_SOFTMAX + """
import os

_idle_r, _idle_w = os.pipe()
for _ in range(60):
    try:
        if os.fork() == 0:
            os.close(_idle_w)
            os.read(_idle_r, 1)
            os._exit(0)
    except OSError:
        break
"""


def _close_to_the_reference_passed(verdict) -> bool:
    """Whether that speed case passed (no row at all, e.g. the sandbox ran out of memory: no)."""
    return any(c.name == "close_to_the_reference" and c.passed for c in verdict.checks)


def test_a_sleepy_softmax_is_too_slow(tmp_path, cpu_clock_sandbox):
    """The control of attack 1b."""
    sandbox = cpu_clock_sandbox
    verdict = grade(load_exercise(VECTORISE), SLEEPY_SOFTMAX, sandbox)
    assert not _close_to_the_reference_passed(verdict), summary(verdict)


def test_a_sleepy_softmax_beside_idle_processes_is_too_slow(tmp_path, sandbox):
    verdict = grade(load_exercise(VECTORISE), SLEEPY_SOFTMAX_BESIDE_IDLE_PROCESSES, sandbox)
    assert not _close_to_the_reference_passed(verdict), summary(verdict)


# --- 6. half the work in a pooled helper that ends, unreaped, before the judge reads its ticks ----
#
# Where the wall clock decides (gVisor), the CPU that tasks working side by side use beyond it is
# charged from /proc/<pid>/stat ticks: a process's own, its ended threads' and the children it
# REAPED. A worker that ignores SIGCHLD has its children released at exit with their times
# added to no one; a child present at the window's start but gone at its end counts nothing
# (``_ticks_spent`` walks the processes found at the end). Helpers forked at import (frozen and
# thawed with the family) each do half of one call's work beside the worker and exit: two loops of
# 30 ms of CPU each per call (3x a baseline of 20 ms, against a threshold of 2x; calibrated by CPU
# time at import, so a faster CPU does not shrink the ratio), done in half the wall time where two
# CPUs are free.
# The control leaves SIGCHLD alone: its ended helpers stay as zombies, whose ticks are read.
STRICT_TOML = PERF_TOML.replace("at_most = 3.0", "at_most = 2.0")
SLOWER_SOLUTION = SOLUTION.replace("burn(0.004)", "burn(0.02)")
HELPERS_END_UNREAPED = SOLUTION.split("def work")[0] + r'''
import os
import signal

def spin(steps):
    total = 0
    for i in range(steps):
        total += i
    return total

def _steps_for(cpu_s):
    """Loop steps that take cpu_s of CPU here: a fixed amount of work, whatever this CPU's speed
    (burn() is timed on the wall clock, so a shared CPU would halve it)."""
    started = time.thread_time()
    spin(200_000)
    return int(200_000 * cpu_s / max(time.thread_time() - started, 1e-4))

HALF = _steps_for(0.03)  # two halves a call: 3x the baseline's 20 ms, against at most 2x

signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # ended children are released, their CPU added to no one
_done_r, _done_w = os.pipe()
_pool = []
for _ in range(15):
    r, w = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(r); os.close(w)
        break
    if pid == 0:
        if os.read(r, 1):
            spin(HALF)
            os.write(_done_w, b"x")
        os._exit(0)
    os.close(r)
    _pool.append(w)

def work(n):
    if _pool:
        os.write(_pool.pop(), b"x")
        spin(HALF)
        os.read(_done_r, 1)
    else:
        spin(2 * HALF)
    return n * 2
'''
HELPERS_END_AS_ZOMBIES = HELPERS_END_UNREAPED.replace(
    "signal.signal(signal.SIGCHLD, signal.SIG_IGN)", "signal.signal(signal.SIGCHLD, signal.SIG_DFL)")


# On gVisor these pass or fail with the machine's idle cores (no assertion may hang on load):
# there the wall clock decides, and a helper that ends inside a window takes the CPU its ticks
# showed with it. With two idle cores, 2x-the-reference work split with pre-forked helpers passed
# at 1.75-1.99x against at most 2x (README, "Security": open on gVisor). Checked by hand under
# runsc, the way to close it: gVisor's cgroupfs has cpuacct (no freezer), and its cpuacct.usage
# keeps the CPU of children that ended (4 x 0.3 s, unreaped: 1.27 s), as the lent cgroup does here.
def test_work_in_helpers_that_end_as_zombies_is_charged(tmp_path, cpu_clock_sandbox):
    sandbox = cpu_clock_sandbox
    verdict = grade(exercise(tmp_path, solution=SLOWER_SOLUTION, toml=STRICT_TOML), HELPERS_END_AS_ZOMBIES, sandbox)
    assert verdict.verdict == Kind.TOO_SLOW, (summary(verdict), perf_case(verdict))


def test_work_in_helpers_that_end_unreaped_is_still_charged(tmp_path, cpu_clock_sandbox):
    sandbox = cpu_clock_sandbox
    verdict = grade(exercise(tmp_path, solution=SLOWER_SOLUTION, toml=STRICT_TOML), HELPERS_END_UNREAPED, sandbox)
    assert verdict.verdict == Kind.TOO_SLOW, (summary(verdict), perf_case(verdict))


# --- 7. slow on four calls in nine: the median never sees it -----------------------------------
#
# A case decides on the median ratio and its interval (grader/harness/stats.py); an interval that
# still straddles the threshold when the budget ends is measured again, and on that last attempt
# the median alone decides. A student that does the baseline's work on five calls in nine and 15x
# that on the other four (its mean call is 7.2x the baseline's) keeps the interval straddling at
# every look, and the median, at about 1x, passes it; the board takes that median as its ratio.
SLOW_FOUR_CALLS_IN_NINE = SOLUTION.split("def work")[0] + r'''
_calls = [0]

def work(n):
    _calls[0] += 1
    burn(0.06 if _calls[0] % 9 in (1, 3, 5, 7) else 0.004)
    return n * 2
'''


def test_code_slow_on_four_calls_in_nine_is_too_slow(tmp_path, sandbox):
    verdict = grade(exercise(tmp_path), SLOW_FOUR_CALLS_IN_NINE, sandbox)
    assert verdict.verdict == Kind.TOO_SLOW, (summary(verdict), perf_case(verdict))


# --- 7b. slow on one call in three: a first attempt passes, no second look needed ---------------
#
# With a third of the calls slow, the interval's upper end (the k-th largest ratio, k about 0.4n at
# 80 pairs) already falls among the fast calls: passed on the first attempt, at about 1x, by
# code whose mean call is 5.7x the baseline's.
SLOW_ONE_CALL_IN_THREE = SOLUTION.split("def work")[0] + r'''
_calls = [0]

def work(n):
    _calls[0] += 1
    burn(0.06 if _calls[0] % 3 == 0 else 0.004)
    return n * 2
'''


def test_code_slow_on_one_call_in_three_is_too_slow(tmp_path, sandbox):
    verdict = grade(exercise(tmp_path), SLOW_ONE_CALL_IN_THREE, sandbox)
    assert verdict.verdict == Kind.TOO_SLOW, (summary(verdict), perf_case(verdict))
