"""The host's load as a verdict shows it: only what was sampled before the first hidden input."""
from __future__ import annotations

import math

from grader.host.load import HostLoad


def load_with(samples: list[tuple[float, int]], cpus: int = 2) -> HostLoad:
    load = HostLoad(cpus=cpus)
    load.samples = list(samples)  # (seconds since the run began, runnable tasks), as the sampler takes them
    return load


def test_a_summary_keeps_the_samples_taken_before_the_hidden_phase():
    # Calm while the speed cases ran, then 40 tasks spun up by a process that saw a hidden input.
    load = load_with([(0.1, 1), (0.2, 1), (1.0, 2), (1.1, 40), (1.2, 40)])
    assert load.summary(until_s=1.0) == {"runnable_mean": 1.33, "runnable_max": 2, "cpus": 2, "samples": 3,
                                         "busy": False}
    assert not load.busy(until_s=1.0) and load.busy(until_s=math.inf) and load.busy()
    assert load.summary()["runnable_max"] == 40


def test_no_sample_in_the_window_shows_no_load():
    load = load_with([(0.5, 9)])
    assert load.summary(until_s=0.0) == {"runnable_mean": None, "runnable_max": None, "cpus": 2, "samples": 0,
                                         "busy": False}
