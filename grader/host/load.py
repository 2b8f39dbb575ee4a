"""How busy the host was while a sandbox ran, and what hardware it is: the speed verdicts' witness.

A wall-clock timing on a machine where more tasks wanted a CPU than it has is not a
measurement of the student's code; the pipeline measures such a case again. The host samples
``procs_running`` (every runnable task on the machine, containers and gVisor sandboxes
included) in a thread for as long as the run lasts. Standard library only.

What the verdict shows of it covers only the time before the judge sent the student's process
its first hidden input (``summary(until_s=...)``): a process that saw a hidden input could
otherwise spin up tasks, or not, and the page would show how many (DESIGN invariant 4).
"""
from __future__ import annotations

import functools
import os
import platform
import statistics
import threading
import time
from types import TracebackType
from typing import Any

SAMPLE_EVERY_S = 0.1


def runnable_tasks() -> int | None:
    """Tasks on the host that are running or want to, less the one reading (this thread)."""
    try:
        with open("/proc/stat") as stat:
            for line in stat:
                if line.startswith("procs_running "):
                    return max(0, int(line.split()[1]) - 1)
    except (OSError, ValueError):
        pass
    return None


@functools.cache
def host_hardware() -> dict[str, Any]:
    """The machine a timing ran on: its CPU model, how many CPUs it has, and its architecture.
    Ratios are measured within one run, but a ratio on another CPU can differ: the verdict says which."""
    return {"cpu_model": _cpu_model(), "cpus": os.cpu_count(), "arch": platform.machine() or None}


def _cpu_model() -> str | None:
    # x86 names it "model name"; arm64 kernels may only say "Model" or "Hardware".
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            fields = {key.strip(): value.strip() for key, value in
                      (line.split(":", 1) for line in cpuinfo if ":" in line)}
    except OSError:
        return platform.processor() or None
    for key in ("model name", "Model", "Hardware", "cpu model"):
        value = fields.get(key)
        if value:
            return " ".join(value.split())
    return platform.processor() or None


class HostLoad:
    """``with HostLoad() as load: sandbox.run(...)``, then ``load.summary()``."""

    def __init__(self, cpus: int | None = None) -> None:
        self.cpus = cpus or os.cpu_count() or 1
        self.samples: list[tuple[float, int]] = []  # (seconds since the run began, runnable tasks)
        self._began = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, name="host-load", daemon=True)

    def _sample(self) -> None:
        while not self._stop.is_set():
            found = runnable_tasks()
            if found is not None:
                self.samples.append((time.monotonic() - self._began, found))
            self._stop.wait(SAMPLE_EVERY_S)

    def __enter__(self) -> HostLoad:
        self._began = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()

    def counts(self, until_s: float | None = None) -> list[int]:
        """The samples taken in the run's first ``until_s`` seconds (all of them: None).

        The judge starts after the run began, so its own "``until_s`` seconds after I started"
        comes later than this one: every sample kept was taken before that moment."""
        return [count for at, count in self.samples if until_s is None or at <= until_s]

    def busy(self, until_s: float | None = None) -> bool:
        """More tasks wanted a CPU, on average, than the host has CPUs (the run's own included)."""
        counts = self.counts(until_s)
        return bool(counts) and statistics.fmean(counts) > self.cpus

    def summary(self, until_s: float | None = None) -> dict[str, Any]:
        counts = self.counts(until_s)
        mean = round(statistics.fmean(counts), 2) if counts else None
        return {"runnable_mean": mean, "runnable_max": max(counts, default=None), "cpus": self.cpus,
                "samples": len(counts), "busy": self.busy(until_s)}
