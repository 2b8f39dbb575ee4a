"""Every exercise in the repository: it is listed, loads, and speaks both languages.

That each one proves itself (its solution ACCEPTED, its starter not, each mutant its declared
verdict) is CI's content check on Docker (tests/e2e/test_content_validates.py), which grades
every program once. The local backend grades with the same Python 3.11 and the same pinned
numpy and torch as the sandbox image (the last test here keeps them so), so grading them on it
again proved nothing more; the local backend's own grading of real exercises is
tests/grader/host/test_pipeline.py's.
"""
from __future__ import annotations

import re

import pytest

from grader.content_root import exercise_folders
from grader.contract import LANGUAGES
from grader.host.spec import load_exercise
from tests.grader.factories import REPO

EXERCISES = exercise_folders(REPO / "exercises")


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


def test_the_sandbox_image_pins_the_python_numpy_and_torch_the_local_backend_grades_with():
    # Why grading every exercise on Docker alone proves it for the local backend too.
    build = (REPO / "sandbox" / "image" / "build.sh").read_text()
    project = (REPO / "pyproject.toml").read_text()
    for package in ("numpy", "torch"):
        image_pin = re.search(rf"^{package.upper()}_VERSION=(\S+)$", build, re.M)
        assert image_pin and f'"{package}=={image_pin.group(1)}"' in project, package
    assert 'requires-python = ">=3.11,<3.12"' in project
    assert "ARG BASE=python:3.11-slim" in (REPO / "sandbox" / "image" / "Dockerfile").read_text()
