"""The glossary (``exercises/glossary.toml``): one term per concept in each language, and a
lint that finds the variants it rejects anywhere in the content.

Checked: every ``*.toml`` and ``*.md`` under the content folder (READMEs aside). In TOML, a
string under an ``en`` or ``zh-hans`` key is prose in that language; a Markdown file is
Chinese when its name ends in ``.zh-hans.md``. Code is not prose: `inline spans` and fenced
blocks are blanked before matching, so identifiers such as ``eager_calls`` stay legal.
"""
from __future__ import annotations

import dataclasses
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from grader.contract import LANGUAGES

GLOSSARY_FILE = "glossary.toml"
_FENCE = re.compile(r"```.*?```", re.S)
_SPAN = re.compile(r"`[^`\n]*`")


class GlossaryError(ValueError):
    pass


@dataclasses.dataclass(frozen=True)
class Term:
    id: str
    name: dict[str, str]  # preferred term per language
    definition: dict[str, str]
    reject: dict[str, tuple[str, ...]]  # plain variants per language
    reject_patterns: dict[str, tuple[re.Pattern[str], ...]]


def load_glossary(path: Path) -> list[Term]:
    """Read the glossary; raise GlossaryError naming the term at fault."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise GlossaryError(f"{path.name}: cannot be read: {error}") from None
    terms, seen = [], set()
    for index, raw in enumerate(data.get("term", [])):
        where = f'{path.name}: term "{raw.get("id", index + 1)}"'
        term_id = raw.get("id")
        if not isinstance(term_id, str) or term_id in seen:
            raise GlossaryError(f"{where}: needs a unique id")
        seen.add(term_id)
        name = {lang: raw.get(lang) for lang in LANGUAGES}
        definition = raw.get("definition", {})
        if not all(isinstance(name[lang], str) and name[lang] for lang in LANGUAGES) or not all(
                isinstance(definition.get(lang), str) and definition.get(lang) for lang in LANGUAGES):
            raise GlossaryError(f"{where}: needs en, zh-hans, definition.en and definition.zh-hans")
        reject = {lang: tuple(raw.get("reject", {}).get(lang, ())) for lang in LANGUAGES}
        patterns = {}
        for lang in LANGUAGES:
            try:
                patterns[lang] = tuple(re.compile(p) for p in raw.get("reject_patterns", {}).get(lang, ()))
            except re.error as error:
                raise GlossaryError(f"{where}: reject_patterns.{lang}: {error}") from None
        for lang in LANGUAGES:
            if any(variant in name[lang] for variant in reject[lang]):
                raise GlossaryError(f"{where}: the preferred term {name[lang]!r} contains a rejected variant")
        terms.append(Term(term_id, name, dict(definition), reject, patterns))
    if not terms:
        raise GlossaryError(f"{path.name}: declares no [[term]]")
    return terms


def _prose(text: str) -> str:
    """The text with code blanked out (same length, so nothing else moves)."""
    text = _FENCE.sub(lambda m: " " * len(m.group()), text)
    return _SPAN.sub(lambda m: " " * len(m.group()), text)


def _toml_texts(data: Any, where: str) -> Iterator[tuple[str, str, str]]:
    """(where, language, text) for every string under an en or zh-hans key."""
    if isinstance(data, dict):
        for key, value in data.items():
            if key in ("reject", "reject_patterns", "code", "accept", "patterns"):
                continue
            if key in LANGUAGES and isinstance(value, str):
                yield f"{where}.{key}" if where else key, key, value
            else:
                yield from _toml_texts(value, f"{where}.{key}" if where else key)
    elif isinstance(data, list):
        for index, item in enumerate(data):
            label = item.get("id") if isinstance(item, dict) and isinstance(item.get("id"), str) else index
            yield from _toml_texts(item, f'{where}[{label}]')


def _texts(path: Path, content_dir: Path) -> Iterator[tuple[str, str, str]]:
    """(where, language, text): one per line of Markdown, one per prose string of TOML."""
    label = path.relative_to(content_dir).as_posix()
    if path.suffix == ".md":
        language = "zh-hans" if path.name == "zh-hans.md" or path.name.endswith(".zh-hans.md") else "en"
        prose = _prose(path.read_text(encoding="utf-8"))  # fences span lines: blank them first
        for number, line in enumerate(prose.split("\n"), 1):
            yield f"{label}, line {number}", language, line
        return
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return  # the file's own loader reports it
    for where, lang, text in _toml_texts(data, ""):
        yield f"{label}: {where}", lang, text


def lint_content(content_dir: Path) -> dict[str, list[str]]:
    """Problems by file (relative to the content folder) for every use of a rejected variant."""
    content_dir = Path(content_dir)
    glossary_path = content_dir / GLOSSARY_FILE
    if not glossary_path.is_file():
        return {}
    try:
        terms = load_glossary(glossary_path)
    except GlossaryError as error:
        return {GLOSSARY_FILE: [str(error)]}
    problems: dict[str, list[str]] = {}
    files = sorted(p for p in content_dir.rglob("*") if p.suffix in (".toml", ".md") and p.name != "README.md"
                   and p.is_file())
    for path in files:
        label = path.relative_to(content_dir).as_posix()
        found = problems.setdefault(label, [])
        for where, lang, text in _texts(path, content_dir):
            prose = _prose(text)
            for term in terms:
                hits = [v for v in term.reject[lang] if v in prose]
                hits += [m.group() for p in term.reject_patterns[lang] for m in p.finditer(prose)]
                for variant in dict.fromkeys(hits):
                    found.append(f"{where}: {variant!r} is a rejected variant; the glossary says "
                                 f"{term.name[lang]!r} ({term.id})")
    return {label: messages for label, messages in problems.items() if messages}
