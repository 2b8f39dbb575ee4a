"""How a timed window is counted from its tasks' CPU and run delay (programs.window_time_ns),
with injected numbers: nothing here depends on how busy the machine is."""
from __future__ import annotations

from grader.harness.programs import window_time_ns

MS = 1_000_000  # nanoseconds


def test_a_task_born_and_ended_inside_is_counted_by_the_cgroup():
    # The worker burns 9 ms while a helper it started burns 9 ms beside it and ends: 9 ms of wall.
    before, after = {1: (0, 0)}, {1: (9 * MS, 0)}
    assert window_time_ns(9 * MS, before, after, judge_ns=0, counted_ns=18 * MS, caller=1) == 18 * MS


def test_without_a_cgroup_a_task_that_ended_makes_the_window_untrustworthy():
    before, after = {1: (0, 0), 2: (0, 0)}, {1: (9 * MS, 0)}
    assert window_time_ns(9 * MS, before, after, judge_ns=0, counted_ns=None, caller=1) is None
    assert window_time_ns(9 * MS, before, after, judge_ns=0, counted_ns=18 * MS, caller=1) == 18 * MS


def test_waiting_still_counts_when_the_cgroup_counts():
    # A sleeping call: 1 ms of CPU, 100 ms of wall, none of it runnable.
    assert window_time_ns(100 * MS, {1: (0, 0)}, {1: (1 * MS, 0)}, judge_ns=0, counted_ns=1 * MS, caller=1) == 100 * MS


def test_the_callers_time_spent_waiting_for_a_cpu_is_left_out():
    # 4 ms of CPU, 30 ms runnable behind other load, 2 ms asleep.
    charged = window_time_ns(36 * MS, {1: (0, 0)}, {1: (4 * MS, 30 * MS)}, judge_ns=0, counted_ns=4 * MS, caller=1)
    assert charged == 6 * MS


def test_helpers_queued_together_cannot_hide_the_callers_sleep():
    # Red team round 8: the caller sleeps 60 ms, then wakes 40 helpers at once for 0.2 ms each;
    # their queue sums to far more than the wall time, but only the caller's own waiting is load.
    before = {1: (0, 0)} | {task: (0, 0) for task in range(2, 42)}
    after = {1: (1 * MS, 0)} | {task: (MS // 5, (task - 2) * MS // 5) for task in range(2, 42)}
    charged = window_time_ns(70 * MS, before, after, judge_ns=0, counted_ns=9 * MS, caller=1)
    assert charged == 70 * MS


def test_the_judge_share_is_left_out_and_the_tasks_own_count_is_a_floor():
    before, after = {1: (0, 0)}, {1: (5 * MS, 0)}
    # The cgroup's count lags a running task by up to a tick: the task's own count wins.
    assert window_time_ns(8 * MS, before, after, judge_ns=3 * MS, counted_ns=4 * MS, caller=1) == 5 * MS


def test_a_reused_task_id_counts_as_a_task_born_inside():
    before, after = {7: (50 * MS, 5 * MS)}, {7: (3 * MS, 0)}
    assert window_time_ns(3 * MS, before, after, judge_ns=0, counted_ns=3 * MS, caller=1) == 3 * MS
