"""Taking exercise folders in as zip files: refuse anything hostile, write nothing outside the folder.

    files = read_exercise_zip(uploaded_bytes)            # UnsafeArchive says why it refused
    folder = write_exercise_folder(files, Path(tmp) / "slug")
"""
from __future__ import annotations

import dataclasses
import io
import os
import re
import stat
import zipfile
from pathlib import Path, PurePosixPath

from grader.content_root import SKIPPED_NAMES


class UnsafeArchive(ValueError):
    """An uploaded archive was refused; str() says why, naming the entry."""


@dataclasses.dataclass(frozen=True)
class ArchiveLimits:
    archive_bytes: int = 4 * 2**20  # the zip itself
    files: int = 200  # entries that are files
    file_bytes: int = 512 * 1024  # one file, uncompressed
    total_bytes: int = 4 * 2**20  # all files together, uncompressed
    ratio: int = 100  # uncompressed / compressed, per file: a higher one is a zip bomb
    depth: int = 6  # folders deep


ARCHIVE_LIMITS = ArchiveLimits()
ALLOWED_SUFFIXES = {".py", ".md", ".toml", ".txt", ".json", ".csv"}
_IGNORED_PARTS = SKIPPED_NAMES | {"__MACOSX"}
_PART = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$")


def read_exercise_zip(data: bytes, limits: ArchiveLimits = ARCHIVE_LIMITS) -> dict[str, bytes]:
    """The files of an uploaded exercise zip by relative path, or UnsafeArchive saying why not.

    Refused: anything that is not a plain zip of small text files inside one folder - absolute
    or ``..`` paths, links and device files, encrypted entries, duplicate names, too many files,
    a file or a total too large, or a compression ratio only a zip bomb has. Sizes are counted
    while reading, never taken from the archive's own headers.
    """
    if len(data) > limits.archive_bytes:
        raise UnsafeArchive(f"the archive is {len(data)} bytes; the limit is {limits.archive_bytes}")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, OSError) as error:
        raise UnsafeArchive(f"not a zip file ({error})") from None
    entries = []
    with archive:
        infos = archive.infolist()
        if len([i for i in infos if not i.is_dir()]) > limits.files:
            raise UnsafeArchive(f"the archive holds more than {limits.files} files")
        seen: set[str] = set()
        for info in infos:
            parts = _safe_parts(info.filename, limits)
            if parts is None:
                continue
            kind = stat.S_IFMT(info.external_attr >> 16)
            if info.is_dir():
                if kind not in (0, stat.S_IFDIR):
                    raise UnsafeArchive(f"{info.filename}: not a plain folder")
                continue
            if kind not in (0, stat.S_IFREG):
                what = "a symbolic link" if kind == stat.S_IFLNK else "not a regular file"
                raise UnsafeArchive(f"{info.filename}: {what}; only plain files are accepted")
            if info.flag_bits & 0x1:
                raise UnsafeArchive(f"{info.filename}: encrypted entries are not accepted")
            key = "/".join(parts).lower()
            if key in seen:
                raise UnsafeArchive(f"{info.filename}: the archive holds this name twice")
            seen.add(key)
            suffix = PurePosixPath(parts[-1]).suffix.lower()
            if suffix not in ALLOWED_SUFFIXES:
                raise UnsafeArchive(
                    f"{info.filename}: only text files ({', '.join(sorted(ALLOWED_SUFFIXES))}) belong in an exercise"
                )
            if info.file_size > limits.file_bytes:
                raise UnsafeArchive(
                    f"{info.filename}: {info.file_size} bytes; one file may have at most {limits.file_bytes}"
                )
            entries.append((info, parts))
        files: dict[str, bytes] = {}
        total = 0
        for info, parts in entries:
            content = _read_entry(archive, info, limits, limits.total_bytes - total)
            total += len(content)
            files["/".join(parts)] = content
    return _strip_common_folder(files)


def _safe_parts(name: str, limits: ArchiveLimits) -> list[str] | None:
    """The path's parts, None for entries to ignore, UnsafeArchive for a hostile name."""
    if "\\" in name or "\x00" in name or name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        raise UnsafeArchive(f"{name!r}: absolute or Windows paths are not accepted")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise UnsafeArchive(f"{name!r}: a path with '..' would leave the exercise folder")
    if _IGNORED_PARTS.intersection(parts) or not parts:
        return None
    if len(parts) > limits.depth:
        raise UnsafeArchive(f"{name!r}: nested more than {limits.depth} folders deep")
    for part in parts:
        if not _PART.match(part):
            raise UnsafeArchive(f"{name!r}: file and folder names may use letters, digits, '_', '-' and '.' only")
    return parts


def _read_entry(archive: zipfile.ZipFile, info: zipfile.ZipInfo, limits: ArchiveLimits, room: int) -> bytes:
    cap = min(limits.file_bytes, room, max(info.compress_size, 1) * limits.ratio)
    chunks, size = [], 0
    try:
        with archive.open(info) as stream:
            while True:
                chunk = stream.read(64 * 1024)
                if not chunk:
                    break
                size += len(chunk)
                if size > cap:
                    if size > room:
                        raise UnsafeArchive(f"{info.filename}: the files together exceed {limits.total_bytes} bytes")
                    if size > limits.file_bytes:
                        raise UnsafeArchive(f"{info.filename}: larger than {limits.file_bytes} bytes")
                    raise UnsafeArchive(
                        f"{info.filename}: compressed more than {limits.ratio}:1, as a zip bomb is; refused"
                    )
                chunks.append(chunk)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, OSError, EOFError) as error:
        raise UnsafeArchive(f"{info.filename}: cannot be read ({error})") from None
    data = b"".join(chunks)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UnsafeArchive(f"{info.filename}: not UTF-8 text ({error.reason} at byte {error.start})") from None
    return data


def _strip_common_folder(files: dict[str, bytes]) -> dict[str, bytes]:
    """``slug/exercise.toml`` -> ``exercise.toml`` when everything sits in one top folder."""
    if not files:
        raise UnsafeArchive("the archive holds no files")
    if "exercise.toml" in files:
        return files
    tops = {path.split("/", 1)[0] for path in files}
    if len(tops) == 1 and all("/" in path for path in files):
        return {path.split("/", 1)[1]: content for path, content in files.items()}
    raise UnsafeArchive("exercise.toml is missing: zip the exercise folder itself (exercise.toml at its top)")


def write_exercise_folder(files: dict[str, bytes | str], folder: Path) -> Path:
    """Write ``files`` into the new, empty ``folder`` without following any link."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=False)
    root = folder.resolve()
    for relative, content in files.items():
        parts = _safe_parts(relative, ARCHIVE_LIMITS)
        if parts is None:
            continue
        target = root.joinpath(*parts)
        if not target.resolve().is_relative_to(root):
            raise UnsafeArchive(f"{relative!r} would leave the exercise folder")
        target.parent.mkdir(parents=True, exist_ok=True)
        data = content.encode("utf-8") if isinstance(content, str) else content
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        with os.fdopen(fd, "wb") as file:
            file.write(data)
    return folder
