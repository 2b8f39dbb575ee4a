"""grader.host.validation with many gradings at once: the same report as one at a time, in
content order; a failing program and a sandbox fault are reported without losing the rest;
timing-sensitive programs are graded with nothing else in flight."""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from grader import contract
from grader.host.validation import Runner, available_cores, default_jobs, validate_content, validate_exercise
from sandbox import Sandbox, SandboxUnavailable
from testbed.exercises import CHECKS, TOML, make_exercise
from tests.grader.factories import grading_sandbox

WRONG = "def add(a, b):\n    return a - b\n"
CRASH = "def add(a, b):\n    raise ValueError('no')\n"
# Spins, as slow code does (a sleeping call is timed too: tests/security/test_redteam_judge.py).
SLOW = ("import time\n\ndef add(a, b):\n    end = time.perf_counter() + 0.002\n"
        "    while time.perf_counter() < end:\n        pass\n    return a + b\n")
PERF_CHECKS = CHECKS.replace("import check, close", "import Race, check, close, perf") + """
@perf(points=1)
def adds_quickly(student, reference, rng):
    return Race(student=student.add, reference=reference.add,
                inputs=lambda rng: (float(rng.normal()), float(rng.normal())))
"""
PERF_TOML = "\n[perf.adds_quickly]\nbaseline = \"reference\"\nat_most = 3.0\nbudget_s = 2\n"


class Recording(Sandbox):
    """The real sandbox, noting when each submission's run starts and ends (and failing one on request)."""

    def __init__(self, real: Sandbox, fail_for: str | None = None) -> None:
        self.real = real
        self.name = real.name
        self.fail_for = fail_for
        self.spans: list[tuple[str, float, float]] = []
        self._lock = threading.Lock()

    @property
    def isolated(self):
        return self.real.isolated

    def close(self):
        self.real.close()

    def run(self, files, argv, limits, options=None):
        code = files.get(contract.SUBMISSION_FILE, b"").decode()
        if code == self.fail_for:
            raise SandboxUnavailable("the engine went away for this one run")
        started = time.monotonic()
        try:
            return self.real.run(files, argv, limits, options)
        finally:
            with self._lock:
                self.spans.append((code, started, time.monotonic()))


@pytest.fixture
def docker(requires):
    return grading_sandbox("docker-runc", requires)


def adder(folder: Path, mutants: dict[str, tuple[str, str]], **kwargs) -> Path:
    """tiny-adder with the named mutants: name -> (declared verdict, code)."""
    toml = kwargs.pop("toml", TOML).replace('id = "tiny-adder"', f'id = "{folder.name}"')
    toml += "\n[mutants]\n" + "".join(f'{name} = "{verdict}"\n' for name, (verdict, _) in mutants.items())
    files = {f"mutants/{name}.py": code for name, (_, code) in mutants.items()}
    return make_exercise(folder, toml=toml, files=files, **kwargs)


def without_seconds(report: dict) -> dict:
    for exercise in report["exercises"]:
        exercise["seconds"] = 0
        for run in exercise["runs"]:
            run["seconds"] = 0
    report["seconds"] = 0
    return report


def test_many_jobs_give_the_report_of_one_in_content_order(tmp_path, docker):
    content = tmp_path / "content"
    adder(content / "coding" / "b-sound", {"subtracts": ("WRONG_ANSWER", WRONG), "crashes": ("RUNTIME_ERROR", CRASH)})
    # Declared wrong: this mutant is a WRONG_ANSWER, so the exercise fails, and says why.
    adder(content / "coding" / "a-misdeclared", {"subtracts": ("RUNTIME_ERROR", WRONG)})
    make_exercise(content / "coding" / "c-broken", omit=("checks.py",))
    finished: list[tuple[str, int, int]] = []

    alone = validate_content(content, docker, quizzes=False, lessons=False, jobs=1, seed=7)
    together = validate_content(content, docker, quizzes=False, lessons=False, jobs=3, seed=7,
                                progress=lambda exercise, done, total: finished.append((exercise.slug, done, total)))

    assert without_seconds(together.to_dict()) == without_seconds(alone.to_dict())
    assert [e.slug for e in together.exercises] == ["a-misdeclared", "b-sound", "c-broken"]
    assert [run.program for run in together.exercises[1].runs] == ["solution", "starter", "mutant:subtracts",
                                                                   "mutant:crashes"]
    misdeclared = together.exercises[0]
    bad = next(run for run in misdeclared.runs if run.program == "mutant:subtracts")
    assert not together.ok and not misdeclared.ok and together.exercises[1].ok
    assert (bad.ok, bad.got, bad.expected) == (False, "WRONG_ANSWER", "RUNTIME_ERROR")
    assert "adds_small_numbers" in bad.detail
    assert "checks.py: missing" in together.exercises[2].error
    # One progress call per exercise, counted, each once every run of it is in.
    assert sorted(slug for slug, _, _ in finished) == ["a-misdeclared", "b-sound", "c-broken"]
    assert [(done, total) for _, done, total in finished] == [(1, 3), (2, 3), (3, 3)]


def test_a_sandbox_fault_in_one_run_keeps_the_other_runs(tmp_path, docker):
    folder = adder(tmp_path / "tiny-adder", {"subtracts": ("WRONG_ANSWER", WRONG), "crashes": ("RUNTIME_ERROR", CRASH)})
    report = validate_exercise(folder, Recording(docker, fail_for=WRONG), jobs=2)
    assert not report.ok
    assert report.error == "mutant:subtracts: SandboxUnavailable: the engine went away for this one run"
    assert report.fault == report.error  # the platform's fault: a worker validates the folder again
    got = {run.program: (run.ok, run.got) for run in report.runs}
    assert got == {"solution": (True, "ACCEPTED"), "starter": (True, "WRONG_ANSWER"),
                   "mutant:crashes": (True, "RUNTIME_ERROR")}


def test_timing_sensitive_programs_are_graded_alone(tmp_path, docker):
    folder = adder(tmp_path / "tiny-adder", {"subtracts": ("WRONG_ANSWER", WRONG), "crashes": ("RUNTIME_ERROR", CRASH),
                                             "spins": ("TOO_SLOW", SLOW)},
                   checks=PERF_CHECKS, toml=TOML + PERF_TOML)
    recording = Recording(docker)
    report = validate_exercise(folder, recording, jobs=3)
    assert report.ok, report.to_dict()
    solution = (folder / "solution.py").read_text()
    timed = [span for span in recording.spans if span[0] in (solution, SLOW)]
    assert len(timed) >= 2
    for code, start, end in timed:  # nothing else of ours ran while the solution or the slow mutant was timed
        assert not [other for other in recording.spans if other[0] != code and other[1] < end and other[2] > start]
    # ... while the others did overlap one another (three jobs, two programs at least at once).
    rest = sorted((start, end) for code, start, end in recording.spans if code not in (solution, SLOW))
    assert any(later[0] < earlier[1] for earlier, later in zip(rest, rest[1:], strict=False))


# --- the runner ---------------------------------------------------------------------------


def test_the_runner_holds_jobs_at_once_and_an_alone_slot_to_itself():
    inside: list[str] = []
    overlaps: dict[str, set[str]] = {}
    most = 0
    lock = threading.Lock()

    def task(name: str, alone: bool) -> str:
        nonlocal most
        with runner.slot(alone=alone):
            with lock:
                for other in inside:
                    overlaps.setdefault(name, set()).add(other)
                    overlaps.setdefault(other, set()).add(name)
                inside.append(name)
                most = max(most, len(inside))
            time.sleep(0.2)
            with lock:
                inside.remove(name)
        return name

    names = [(f"t{n}", n % 4 == 0) for n in range(12)]
    with Runner(3) as runner:
        futures = [runner.put(lambda n=name, a=alone: task(n, a), 0 if alone else 1) for name, alone in names]
        assert [f.result() for f in futures] == [name for name, _ in names]
    assert most == 3
    for name, alone in names:
        if alone:
            assert not overlaps.get(name), (name, overlaps.get(name))


def test_a_failing_task_is_reported_through_its_future_and_the_rest_go_on():
    def boom() -> None:
        raise SandboxUnavailable("no engine")

    with Runner(2) as runner:
        futures = [runner.submit(boom), runner.submit(lambda: 2)]
        with pytest.raises(SandboxUnavailable, match="no engine"):
            futures[0].result()
        assert futures[1].result() == 2


def test_jobs_default_to_the_cores_over_one_sandboxs_share():
    cores = available_cores()
    assert 0 < cores <= len(os.sched_getaffinity(0))
    assert default_jobs() == default_jobs(share=1.0) == max(1, int(cores))
    assert default_jobs(share=0.5) == max(1, int(2 * cores))
    assert default_jobs(share=1000.0) == 1
