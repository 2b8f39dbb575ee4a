"""grader.content: proving exercises in the sandbox, and refusing hostile exercise archives."""
from __future__ import annotations

import io
import stat
import zipfile
from pathlib import Path

import pytest

from grader.content import (
    ArchiveLimits,
    UnsafeArchive,
    exercise_folders,
    extract_exercise_zip,
    read_exercise_zip,
    validate_content,
    validate_exercise,
)
from grader.spec import load_exercise
from tests.grader.factories import REPO, TOML, grading_sandbox, make_exercise

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


def zipped(entries: dict[str, bytes | str], *, links: dict[str, str] | None = None, compression=zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, target)
    return buffer.getvalue()


def folder_entries(folder: Path, prefix: str = "") -> dict[str, bytes]:
    return {prefix + p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


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
    report = validate_exercise(tiny(tmp_path, mutants='subtracts = "RUNTIME_ERROR"\ncrashes = "RUNTIME_ERROR"\n'), docker)
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


def test_an_invalid_folder_is_reported_without_running_anything(tmp_path):
    folder = tiny(tmp_path)
    (folder / "exercise.toml").write_text(TOML.replace("memory_mb = 256", 'memory_mb = "2G"'))
    report = validate_exercise(folder, sandbox=None)
    assert not report.ok and not report.runs
    assert report.error == 'exercise.toml: [limits].memory_mb must be a number, got "2G"'


def test_a_gpu_exercise_is_skipped_with_a_reason_where_no_gpu_is(tmp_path):
    folder = tiny(tmp_path)
    (folder / "exercise.toml").write_text(TOML.replace("points = 10", "points = 10\ngpu = true") + '\n[mutants]\nsubtracts = "WRONG_ANSWER"\ncrashes = "RUNTIME_ERROR"\n')
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


def test_every_exercise_in_the_repository_loads():
    folders = exercise_folders(REPO / "exercises")
    assert len(folders) >= 12
    for folder in folders:
        spec = load_exercise(folder)
        assert spec.id == folder.name and spec.mutants, folder.name
        assert all(spec.statement[lang].strip() and spec.title[lang] for lang in ("en", "zh-hans")), folder.name


# --- zip import ---------------------------------------------------------------------------


def test_a_zipped_folder_is_extracted_with_its_top_folder_removed(tmp_path):
    source = tiny(tmp_path / "src")
    data = zipped(folder_entries(source, "tiny-adder/") | {"__MACOSX/._x": b"junk", "tiny-adder/.DS_Store": b"x"})
    folder = extract_exercise_zip(data, tmp_path / "out")
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) == sorted(folder_entries(source))


@pytest.mark.parametrize(
    "entries, reason",
    [
        ({"exercise.toml": "x", "../evil.py": "x"}, "'..'"),
        ({"exercise.toml": "x", "/etc/cron.d/evil.py": "x"}, "absolute"),
        ({"exercise.toml": "x", "C:/evil.py": "x"}, "absolute or Windows"),
        ({"exercise.toml": "x", "a\\..\\evil.py": "x"}, "absolute or Windows"),
        ({"exercise.toml": "x", "run.sh": "x"}, "only text files"),
        ({"exercise.toml": "x", "data.py": b"\xff\xfe\x00"}, "not UTF-8"),
        ({"exercise.toml": "x", "Solution.py": "x", "solution.py": "y"}, "twice"),
        ({"one/exercise.toml": "x", "two/statement.md": "x"}, "exercise.toml is missing"),
    ],
    ids=["dot-dot", "absolute", "drive", "backslash", "not-text", "not-utf8", "case-duplicate", "two-folders"],
)
def test_a_hostile_archive_is_refused_with_a_reason(entries, reason, tmp_path):
    with pytest.raises(UnsafeArchive, match=reason.replace("(", r"\(").replace(".", r"\.")):
        extract_exercise_zip(zipped(entries), tmp_path / "out")
    assert not (tmp_path / "out").exists() and not (tmp_path / "evil.py").exists()


def test_a_symbolic_link_is_refused(tmp_path):
    data = zipped({"exercise.toml": "x"}, links={"solution.py": "/etc/passwd"})
    with pytest.raises(UnsafeArchive, match="symbolic link"):
        extract_exercise_zip(data, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_zip_bomb_is_refused_while_reading(tmp_path):
    bomb = zipped({"exercise.toml": "x", "checks.py": b"0" * (3 * 2**20)})
    assert len(bomb) < 10_000
    with pytest.raises(UnsafeArchive, match="zip bomb"):
        read_exercise_zip(bomb, ArchiveLimits(file_bytes=8 * 2**20, total_bytes=8 * 2**20))


def test_headers_that_lie_about_sizes_do_not_help(tmp_path):
    data = bytearray(zipped({"exercise.toml": "x", "checks.py": b"0" * 200_000}))
    # Shrink the declared size in the central directory; reading must still stop at the real size.
    central = data.rfind(b"PK\x01\x02")
    data[central + 24:central + 28] = (10).to_bytes(4, "little")
    with pytest.raises(UnsafeArchive):
        read_exercise_zip(bytes(data), ArchiveLimits(file_bytes=100_000, ratio=10_000))


def test_a_huge_file_and_a_huge_archive_are_refused(tmp_path):
    stored = zipped({"exercise.toml": "x", "statement.md": b"a" * 600_000}, compression=zipfile.ZIP_STORED)
    with pytest.raises(UnsafeArchive, match="one file may have at most"):
        read_exercise_zip(stored)
    with pytest.raises(UnsafeArchive, match="the limit is"):
        read_exercise_zip(b"PK" + b"\0" * (5 * 2**20))


def test_too_many_files_are_refused(tmp_path):
    entries = {"exercise.toml": "x"} | {f"mutants/m{i}.py": "x" for i in range(201)}
    with pytest.raises(UnsafeArchive, match="more than 200 files"):
        read_exercise_zip(zipped(entries))


def test_not_a_zip_is_refused():
    with pytest.raises(UnsafeArchive, match="not a zip file"):
        read_exercise_zip(b"just some bytes")
