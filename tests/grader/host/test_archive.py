"""grader.host.archive: taking exercise folders in as zip files, refusing hostile ones."""
from __future__ import annotations

import io
import stat
import zipfile
from pathlib import Path

import pytest

from grader.host.archive import (
    ArchiveLimits,
    UnsafeArchive,
    read_exercise_zip,
    write_exercise_folder,
)
from testbed.exercises import TOML, make_exercise


def extract(data: bytes, folder: Path) -> Path:
    return write_exercise_folder(read_exercise_zip(data), folder)


def zipped(
    entries: dict[str, bytes | str], *, links: dict[str, str] | None = None, compression=zipfile.ZIP_DEFLATED
) -> bytes:
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




def test_a_zipped_folder_is_extracted_with_its_top_folder_removed(tmp_path):
    source = make_exercise(tmp_path / "src" / "tiny-adder", toml=TOML)
    data = zipped(folder_entries(source, "tiny-adder/") | {"__MACOSX/._x": b"junk", "tiny-adder/.DS_Store": b"x"})
    folder = extract(data, tmp_path / "out")
    unpacked = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert unpacked == sorted(folder_entries(source))


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
        extract(zipped(entries), tmp_path / "out")
    assert not (tmp_path / "out").exists() and not (tmp_path / "evil.py").exists()


def test_a_symbolic_link_is_refused(tmp_path):
    data = zipped({"exercise.toml": "x"}, links={"solution.py": "/etc/passwd"})
    with pytest.raises(UnsafeArchive, match="symbolic link"):
        extract(data, tmp_path / "out")
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
