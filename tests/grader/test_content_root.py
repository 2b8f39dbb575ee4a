"""grader.content_root: one listing, one reading and one digest of exercise folders for every reader."""
from __future__ import annotations

import os

import pytest

from grader.content_root import exercise_folders, files_digest, folder_digest, folder_files
from testbed.exercises import make_exercise


def test_the_authoring_pages_staging_folders_are_no_exercises(tmp_path):
    make_exercise(tmp_path / "coding" / "tiny-adder")
    make_exercise(tmp_path / "coding" / ".staging-1234")
    make_exercise(tmp_path / "coding" / ".old-5678")
    (tmp_path / "coding" / "notes.txt").write_text("not a folder")
    assert [p.name for p in exercise_folders(tmp_path)] == ["tiny-adder"]


def test_naming_a_missing_or_hidden_exercise_is_an_error(tmp_path):
    make_exercise(tmp_path / "coding" / ".staging-1234")
    with pytest.raises(FileNotFoundError, match="no-such, .staging-1234"):
        exercise_folders(tmp_path, ["no-such", ".staging-1234"])
    assert exercise_folders(tmp_path / "nothing-here") == []


def test_folder_files_skip_litter_and_never_follow_links(tmp_path):
    folder = make_exercise(tmp_path / "ex")
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "checks.cpython-311.pyc").write_bytes(b"\0")
    (folder / ".DS_Store").write_bytes(b"\0")
    os.symlink("/etc/passwd", folder / "passwd.txt")
    files = folder_files(folder)
    assert sorted(files) == [
        "checks.py",
        "exercise.toml",
        "solution.py",
        "starter.py",
        "statement.md",
        "statement.zh-hans.md",
    ]


def test_a_folder_and_the_same_files_uploaded_have_one_digest(tmp_path):
    folder = make_exercise(tmp_path / "ex", files={"mutants/wrong.py": "x = 1\n"})
    as_text = {name: data.decode("utf-8") for name, data in folder_files(folder).items()}
    assert folder_digest(folder) == files_digest(as_text)
    (folder / "mutants" / "wrong.py").write_text("x = 2\n")
    assert folder_digest(folder) != files_digest(as_text)
