"""grader.host.validation: proving exercises in the sandbox."""
from __future__ import annotations

from pathlib import Path

import pytest

from grader.content_root import exercise_folders
from grader.host.validation import validate_content, validate_exercise
from testbed.exercises import TOML, make_exercise
from tests.grader.factories import grading_sandbox

WRONG = "def add(a, b):\n    return a - b\n"
CRASH = "def add(a, b):\n    raise ValueError('no')\n"


@pytest.fixture
def docker(requires):
    return grading_sandbox("docker-runc", requires)


def tiny(tmp_path: Path, mutants: str = 'subtracts = "WRONG_ANSWER"\ncrashes = "RUNTIME_ERROR"\n', **kwargs) -> Path:
    return make_exercise(
        tmp_path / "tiny-adder",
        toml=TOML + "\n[mutants]\n" + mutants,
        files={"mutants/subtracts.py": WRONG, "mutants/crashes.py": CRASH},
        **kwargs,
    )


# --- validating ---------------------------------------------------------------------------


def test_a_sound_exercise_is_proven(tmp_path, docker):
    report = validate_exercise(tiny(tmp_path), docker)
    assert report.ok, report.to_dict()
    got = {run.program: (run.expected, run.got) for run in report.runs}
    assert got == {
        "solution": ("ACCEPTED", "ACCEPTED"),
        "starter": ("not ACCEPTED", "WRONG_ANSWER"),
        "mutant:subtracts": ("WRONG_ANSWER", "WRONG_ANSWER"),
        "mutant:crashes": ("RUNTIME_ERROR", "RUNTIME_ERROR"),
    }


def test_a_mutant_with_the_wrong_declared_verdict_fails_the_exercise(tmp_path, docker):
    folder = tiny(tmp_path, mutants='subtracts = "RUNTIME_ERROR"\ncrashes = "RUNTIME_ERROR"\n')
    report = validate_exercise(folder, docker)
    assert not report.ok
    bad = next(run for run in report.runs if run.program == "mutant:subtracts")
    assert not bad.ok and bad.got == "WRONG_ANSWER" and bad.expected == "RUNTIME_ERROR"
    assert "adds_small_numbers" in bad.detail


def test_a_starter_that_passes_fails_the_exercise(tmp_path, docker):
    folder = tiny(tmp_path)
    (folder / "starter.py").write_text("def add(a, b):\n    return a + b\n")
    report = validate_exercise(folder, docker)
    starter = next(run for run in report.runs if run.program == "starter")
    assert not report.ok and not starter.ok and starter.got == "ACCEPTED"


def test_a_solution_that_crashes_fails_the_exercise(tmp_path, docker):
    report = validate_exercise(tiny(tmp_path, solution=CRASH), docker)
    solution = next(run for run in report.runs if run.program == "solution")
    assert not report.ok and not solution.ok and solution.got == "RUNTIME_ERROR"
    assert "ValueError: no" in solution.detail
    assert report.fault == ""  # the exercise's own crash (the others meet it as INTERNAL_ERROR): not the platform's


def test_an_invalid_folder_is_reported_without_running_anything(tmp_path):
    folder = tiny(tmp_path)
    (folder / "exercise.toml").write_text(TOML.replace("memory_mb = 256", 'memory_mb = "2G"'))
    report = validate_exercise(folder, sandbox=None)
    assert not report.ok and not report.runs
    assert report.error == 'exercise.toml: [limits].memory_mb must be a number, got "2G"'
    assert report.fault == ""  # the folder's own error, stored as the upload's


def test_a_gpu_exercise_is_skipped_with_a_reason_where_no_gpu_is(tmp_path):
    folder = tiny(tmp_path)
    mutants = '\n[mutants]\nsubtracts = "WRONG_ANSWER"\ncrashes = "RUNTIME_ERROR"\n'
    (folder / "exercise.toml").write_text(TOML.replace("points = 10", "points = 10\ngpu = true") + mutants)
    report = validate_exercise(folder, sandbox=None, gpu=False)
    assert report.ok and report.skipped.startswith("needs a GPU") and not report.runs


def test_validate_content_covers_every_folder_and_names_the_broken_one(tmp_path, docker):
    content = tmp_path / "content"
    tiny(content / "coding")
    broken = make_exercise(content / "coding" / "broken-one", omit=("checks.py",))
    report = validate_content(content, docker, quizzes=False)
    by_slug = {e.slug: e for e in report.exercises}
    assert set(by_slug) == {"tiny-adder", "broken-one"} and not report.ok
    assert by_slug["tiny-adder"].ok and "checks.py: missing" in by_slug["broken-one"].error
    assert broken.is_dir()


def test_naming_a_missing_exercise_is_an_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no-such"):
        exercise_folders(tmp_path, ["no-such"])


RULE = """
[[rules]]
modules = ["fractions"]
mutants = ["subtracts"]
reason.en = "add the numbers yourself"
reason.zh-hans = "自己把两个数加起来"
"""


def test_a_rules_mutant_must_be_refused_by_that_rule(tmp_path, docker):
    # "subtracts" gets its declared WRONG_ANSWER, but by its arithmetic, not by the rule it is
    # said to prove: the rule is unproven, and so is the exercise.
    folder = make_exercise(tmp_path / "tiny-adder", toml=TOML + '\n[mutants]\nsubtracts = "WRONG_ANSWER"\n' + RULE,
                           files={"mutants/subtracts.py": WRONG})
    report = validate_exercise(folder, docker)
    bad = next(run for run in report.runs if run.program == "mutant:subtracts")
    assert not report.ok and not bad.ok and bad.got == "WRONG_ANSWER"
    # Using the banned module, it is proven.
    (folder / "mutants" / "subtracts.py").write_text("import fractions\n\ndef add(a, b):\n    return a - b\n")
    report = validate_exercise(folder, docker)
    assert report.ok, report.to_dict()
