"""Every exercise in the repository: it loads, speaks both languages, and proves itself in the
local sandbox (its solution ACCEPTED, its starter not).

Each mutant's declared verdict is proven for every exercise too, by CI's content check on
Docker (tests/e2e/test_content_validates.py); together they grade every exercise on both
backends without grading each program twice.
"""
from __future__ import annotations

import pytest

from grader.content_root import exercise_folders
from grader.contract import LANGUAGES, Kind
from grader.host.pipeline import grade
from grader.host.spec import load_exercise
from grader.host.validation import gpu_present
from tests.grader.factories import REPO, grading_sandbox

EXERCISES = exercise_folders(REPO / "exercises")


@pytest.fixture
def local(requires):
    return grading_sandbox("local", requires)


def test_every_exercise_folder_is_listed():
    listed = {folder.name for folder in EXERCISES}
    on_disk = {p.name for p in (REPO / "exercises" / "coding").iterdir() if p.is_dir() and not p.name.startswith(".")}
    assert listed == on_disk and len(listed) >= 13


@pytest.mark.parametrize("folder", EXERCISES, ids=lambda folder: folder.name)
def test_every_exercise_loads_in_both_languages_with_mutants(folder):
    spec = load_exercise(folder)
    assert spec.id == folder.name and spec.mutants
    assert all(spec.statement[lang].strip() and spec.title[lang] and spec.summary[lang] for lang in LANGUAGES)
    assert spec.solution != spec.starter and all(m.code != spec.solution for m in spec.mutants)
    # The editorial a student reads once the exercise is solved: every mutant explained.
    assert all(set(m.why) == set(LANGUAGES) for m in spec.mutants), [m.name for m in spec.mutants if not m.why]


@pytest.mark.slow
@pytest.mark.parametrize("folder", EXERCISES, ids=lambda folder: folder.name)
def test_every_exercise_accepts_its_solution_and_not_its_starter(folder, local):
    spec = load_exercise(folder)
    if spec.gpu and not gpu_present():
        pytest.skip(f"{spec.id} needs a GPU; the local backend has none (it is proven where one is present)")
    solution = grade(spec, spec.solution, local)
    assert solution.verdict == Kind.ACCEPTED, [
        (c.name, c.kind, c.message[:200]) for c in solution.checks
    ] + solution.notes
    starter = grade(spec, spec.starter, local)
    assert starter.verdict not in (Kind.ACCEPTED, Kind.INTERNAL_ERROR), starter.to_dict()
