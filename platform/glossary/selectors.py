"""The glossary as the pages show it, read from the content folder (no database: the file is the truth)."""
from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

from django.conf import settings

from grader.glossary import GLOSSARY_FILE, GlossaryError, Term, load_glossary


@dataclasses.dataclass(frozen=True)
class Entry:
    """One term seen from a language: its name there, the other language's name beside it."""

    id: str
    name: str
    other_name: str
    other_language: str  # for the lang attribute of other_name
    definition: str
    rejected: tuple[str, ...]


def glossary_path() -> Path:
    return Path(settings.CONTENT_DIR) / GLOSSARY_FILE


@functools.lru_cache(maxsize=4)
def _terms(path: Path, modified: float) -> tuple[Term, ...]:
    # Keyed on the file's mtime, so an edited glossary shows without a restart.
    return tuple(load_glossary(path))


def glossary_entries(language: str) -> list[Entry]:
    """Every term in ``language`` ("en" or "zh-hans"), in the file's order (related terms stand together);
    [] when the file is missing or broken (validate_content reports why)."""
    path = glossary_path()
    try:
        terms = _terms(path, path.stat().st_mtime)
    except (OSError, GlossaryError):
        return []
    language = "zh-hans" if language.lower().startswith("zh") else "en"
    other = "en" if language == "zh-hans" else "zh-hans"
    other_tag = "en" if other == "en" else "zh-Hans"
    return [Entry(t.id, t.name[language], t.name[other], other_tag, t.definition[language], t.reject[language])
            for t in terms]
