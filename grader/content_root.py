"""The content root (``exercises/``) as every reader of it sees it: where coding exercises
live, which folders and files are not content, how a folder is fingerprinted, and the
difficulties that every exercise, quiz bank and interview template uses.

Standard library only. The exercise specs, the quiz banks, the validator and the Django
catalog all read the content root through this module, so they agree on what is in it.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from pathlib import Path

DIFFICULTIES = ("easy", "medium", "hard")
CODING_DIR = "coding"
QUIZZES_DIR = "quizzes"
INTERVIEWS_DIR = "interviews"
# Never content: caches and desktop litter, wherever they appear in a folder.
SKIPPED_NAMES = frozenset({"__pycache__", ".DS_Store"})


def exercise_folders(content_dir: Path, slugs: Iterable[str] = ()) -> list[Path]:
    """The exercise folders under ``content_dir/coding``: all of them, or those named.

    A folder whose name starts with a dot is not an exercise: the authoring page stages an
    upload in ``.staging-*`` and retires the old folder as ``.old-*`` while it publishes.
    """
    coding = Path(content_dir) / CODING_DIR
    wanted = list(slugs)
    if wanted:
        missing = [slug for slug in wanted if slug.startswith(".") or not (coding / slug).is_dir()]
        if missing:
            raise FileNotFoundError(f"no exercise folder {', '.join(missing)} under {coding}")
        return [coding / slug for slug in wanted]
    if not coding.is_dir():
        return []
    return sorted(p for p in coding.iterdir() if p.is_dir() and not p.name.startswith("."))


def folder_files(path: Path) -> dict[str, bytes]:
    """Every regular file of a folder by POSIX relative path; links are not followed, litter is skipped."""
    files = {}
    for file in sorted(Path(path).rglob("*")):
        relative = file.relative_to(path)
        if SKIPPED_NAMES.intersection(relative.parts) or file.is_symlink() or not file.is_file():
            continue
        files[relative.as_posix()] = file.read_bytes()
    return files


def files_digest(files: Mapping[str, bytes | str]) -> str:
    """sha256 over every file's relative path and bytes (text as UTF-8): any change gives a new digest."""
    digest = hashlib.sha256()
    for relative in sorted(files):
        content = files[relative]
        data = content.encode("utf-8") if isinstance(content, str) else content
        digest.update(f"{relative}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def folder_digest(path: Path) -> str:
    """The digest of a folder's files (see files_digest): the same as of the same files uploaded."""
    return files_digest(folder_files(path))
