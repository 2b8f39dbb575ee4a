"""Proving content before students see it, and taking exercise folders in as zip files.

    report = validate_exercise(Path("exercises/coding/scalar-autograd"), sandbox)
    report.ok            # the solution ACCEPTED, the starter not, every mutant its declared verdict

    folder = extract_exercise_zip(uploaded_bytes, Path(tmp))   # UnsafeArchive says why it refused

Everything here is pure Python with no Django: the ``validate_content`` management command,
CI and the instructors' upload page all call these same functions, so an uploaded zip is
validated exactly like a folder in git.
"""
from __future__ import annotations

import dataclasses
import io
import os
import re
import shutil
import stat
import time
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path, PurePosixPath
from typing import Any

from grader.quizzes import validate_all
from grader.spec import ExerciseSpec, SpecError, load_exercise
from grader.verdict import Kind, Verdict

# Verdicts that depend on timing: a disagreement there is measured once more before it counts.
_TIMING_KINDS = {Kind.TOO_SLOW, Kind.TIME_LIMIT}


# --- validating exercises ---------------------------------------------------------------


@dataclasses.dataclass
class RunReport:
    """One program graded against its exercise: the solution, the starter, or a mutant."""

    program: str  # "solution", "starter", "mutant:<name>"
    expected: str  # a verdict, or "not ACCEPTED" for the starter
    got: str
    ok: bool
    seconds: float
    detail: str = ""  # the failing checks, or the judge's notes, when ok is False
    attempts: int = 1

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass
class ExerciseReport:
    slug: str
    ok: bool
    error: str = ""  # why the folder itself is invalid (SpecError), or the sandbox failed
    skipped: str = ""  # why it was not run here (e.g. it needs a GPU and none is present)
    runs: list[RunReport] = dataclasses.field(default_factory=list)
    seconds: float = 0.0
    title: dict[str, str] = dataclasses.field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "slug": self.slug,
            "ok": self.ok,
            "error": self.error,
            "skipped": self.skipped,
            "seconds": round(self.seconds, 2),
            "title": dict(self.title),
            "runs": [run.to_dict() for run in self.runs],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ExerciseReport:
        runs = [RunReport(**run) for run in data.get("runs", [])]
        return cls(
            slug=str(data["slug"]), ok=bool(data["ok"]), error=str(data.get("error", "")),
            skipped=str(data.get("skipped", "")), runs=runs, seconds=float(data.get("seconds", 0.0)),
            title=dict(data.get("title") or {}),
        )


@dataclasses.dataclass
class ContentReport:
    exercises: list[ExerciseReport] = dataclasses.field(default_factory=list)
    quizzes: dict[str, list[str]] | None = None  # problems by quiz file; None when not validated
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        exercises_ok = all(e.ok for e in self.exercises)
        quizzes_ok = not any(self.quizzes.values()) if self.quizzes else True
        return exercises_ok and quizzes_ok

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "seconds": round(self.seconds, 2),
            "exercises": [e.to_dict() for e in self.exercises],
            "quizzes": self.quizzes,
        }


def gpu_present() -> bool:
    """Whether this host can give a sandbox an NVIDIA GPU (GRAPHDOJO_GPU=0/1 overrides)."""
    forced = os.environ.get("GRAPHDOJO_GPU")
    if forced in ("0", "1"):
        return forced == "1"
    return Path("/dev/nvidiactl").exists() and shutil.which("nvidia-smi") is not None


def validate_exercise(
    path: Path, sandbox: Any, *, gpu: bool | None = None, seed: int | None = None,
    grade: Callable[..., Verdict] | None = None,
) -> ExerciseReport:
    """Load ``path`` and prove it in ``sandbox``: solution ACCEPTED, starter not, mutants as declared."""
    started = time.monotonic()
    path = Path(path)
    try:
        spec = load_exercise(path)
    except SpecError as error:
        return ExerciseReport(slug=path.name, ok=False, error=str(error), seconds=time.monotonic() - started)
    report = ExerciseReport(slug=spec.slug, ok=True, title=dict(spec.title))
    if spec.gpu and not (gpu_present() if gpu is None else gpu):
        report.skipped = "needs a GPU (gpu = true in exercise.toml) and this host has none; it is validated where one is present"
        report.seconds = time.monotonic() - started
        return report
    if grade is None:
        from grader.pipeline import grade
    try:
        for program, code, expected in _programs(spec):
            report.runs.append(_prove(spec, sandbox, grade, program, code, expected, seed))
    except Exception as error:  # SandboxUnavailable and friends: say so, keep going with the rest
        report.error = f"{type(error).__name__}: {error}"
    report.ok = not report.error and all(run.ok for run in report.runs)
    report.seconds = time.monotonic() - started
    return report


def _programs(spec: ExerciseSpec) -> Iterable[tuple[str, str, str]]:
    yield "solution", spec.solution, str(Kind.ACCEPTED)
    yield "starter", spec.starter, f"not {Kind.ACCEPTED}"
    for mutant in spec.mutants:
        yield f"mutant:{mutant.name}", mutant.code, str(mutant.expected)


def _prove(spec: ExerciseSpec, sandbox: Any, grade: Callable[..., Verdict], program: str, code: str,
           expected: str, seed: int | None) -> RunReport:
    started = time.monotonic()
    attempts = 0
    while True:
        attempts += 1
        verdict = grade(spec, code, sandbox, seed=seed)
        ok = _meets(verdict.verdict, expected)
        # A platform fault proves nothing either way, and a timing verdict on a busy machine
        # may be noise: both are measured once more (with a fresh seed) before they count.
        retry = not ok and attempts < 2 and (
            verdict.verdict == Kind.INTERNAL_ERROR or verdict.verdict in _TIMING_KINDS or expected in _TIMING_KINDS
        )
        if not retry:
            break
    return RunReport(
        program=program, expected=expected, got=str(verdict.verdict), ok=ok,
        seconds=round(time.monotonic() - started, 2), detail="" if ok else _detail(verdict), attempts=attempts,
    )


def _meets(got: Kind, expected: str) -> bool:
    if got == Kind.INTERNAL_ERROR:
        return False
    if expected.startswith("not "):
        return got != Kind(expected.removeprefix("not "))
    return got == Kind(expected)


def _detail(verdict: Verdict) -> str:
    lines = [
        f"{check.name}: {check.kind or 'FAILED'}: {check.message.strip()[:300]}"
        for check in verdict.checks if not check.passed
    ]
    # A judge traceback says what went wrong at its end.
    lines += [note if len(note) <= 800 else "..." + note[-800:] for note in verdict.notes]
    return "\n".join(lines)[:4000]


def exercise_folders(content_dir: Path, slugs: Iterable[str] = ()) -> list[Path]:
    """The exercise folders under ``content_dir/coding``: all of them, or those named."""
    coding = Path(content_dir) / "coding"
    wanted = list(slugs)
    if wanted:
        missing = [slug for slug in wanted if not (coding / slug).is_dir()]
        if missing:
            raise FileNotFoundError(f"no exercise folder {', '.join(missing)} under {coding}")
        return [coding / slug for slug in wanted]
    return sorted(p for p in coding.iterdir() if p.is_dir() and not p.name.startswith(".")) if coding.is_dir() else []


def validate_content(
    content_dir: Path, sandbox: Any, *, slugs: Iterable[str] = (), gpu: bool | None = None,
    quizzes: bool | None = None, progress: Callable[[ExerciseReport], None] | None = None,
) -> ContentReport:
    """Validate every exercise (or those named) and, with all of them, every quiz bank."""
    started = time.monotonic()
    slugs = list(slugs)
    report = ContentReport()
    for folder in exercise_folders(content_dir, slugs):
        exercise = validate_exercise(folder, sandbox, gpu=gpu)
        report.exercises.append(exercise)
        if progress is not None:
            progress(exercise)
    if quizzes is None:
        quizzes = not slugs
    if quizzes:
        report.quizzes = _validate_quizzes(Path(content_dir), sandbox)
    report.seconds = time.monotonic() - started
    return report


def _validate_quizzes(content_dir: Path, sandbox: Any) -> dict[str, list[str]]:
    try:
        problems = validate_all(content_dir, sandbox)
    except Exception as error:  # the quiz loader's own failure is a content failure to report
        return {"exercises/quizzes": [f"{type(error).__name__}: {error}"]}
    return {str(name): list(messages) for name, messages in problems.items()}


# --- taking exercise folders in as zip files ---------------------------------------------


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
_IGNORED_PARTS = {"__MACOSX", "__pycache__", ".DS_Store"}
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
                raise UnsafeArchive(f"{info.filename}: {info.file_size} bytes; one file may have at most {limits.file_bytes}")
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


def extract_exercise_zip(data: bytes, folder: Path, limits: ArchiveLimits = ARCHIVE_LIMITS) -> Path:
    """Check an uploaded zip and write its files into the new folder ``folder``."""
    return write_exercise_folder(read_exercise_zip(data, limits), folder)
