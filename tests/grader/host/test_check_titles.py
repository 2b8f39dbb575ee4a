"""Checks carry titles in both languages; the spec reads them without running checks.py."""
from pathlib import Path

import pytest

from grader.glossary import load_glossary
from grader.host import SpecError, check_titles, load_exercise, visible_only

EXERCISES = sorted((Path(__file__).resolve().parents[3] / "exercises" / "coding").iterdir())


@pytest.mark.parametrize("folder", EXERCISES, ids=lambda p: p.name)
def test_every_check_has_a_title_in_english_and_chinese(folder):
    spec = load_exercise(folder)
    titles = check_titles(spec.checks_source)
    untitled = [c.name for c in spec.checks if set(titles.get(c.name, {})) != {"en", "zh-hans"}]
    assert not untitled, f"{folder.name}: give these checks title={{'en': ..., 'zh-hans': ...}}: {untitled}"


def test_chinese_titles_use_the_glossarys_terms():
    terms = load_glossary(EXERCISES[0].parents[1] / "glossary.toml")
    found = []
    for folder in EXERCISES:
        for name, title in check_titles(load_exercise(folder).checks_source).items():
            text = title.get("zh-hans", "")
            for term in terms:
                rejected = [r for r in term.reject.get("zh-hans", ()) if r in text]
                rejected += [p.pattern for p in term.reject_patterns.get("zh-hans", ()) if p.search(text)]
                found += [f"{folder.name}:{name}: {r!r} (say {term.name['zh-hans']!r})" for r in rejected]
    assert not found, found


@pytest.mark.parametrize(
    "decorator",
    ['@check(title="Just English")', '@check(title={"fr": "Bonjour"})', '@check(title={"en": ""})'],
)
def test_a_malformed_title_is_named(tmp_path, decorator):
    source = f"from grader.harness import check\n\n{decorator}\ndef works(student, reference, rng):\n    pass\n"
    with pytest.raises(SpecError, match="checks.py: works: title"):
        check_titles(source)


def test_a_practice_run_keeps_only_the_visible_checks_and_every_line_where_it_was():
    spec = load_exercise(EXERCISES[[p.name for p in EXERCISES].index("static-graph-executor")])
    practice = visible_only(spec)
    assert [c.name for c in practice.checks] == spec.visible_checks and practice.perf == []
    assert practice.checks_source.count("\n") == spec.checks_source.count("\n")
    registered = [line for line in practice.checks_source.splitlines() if line.startswith(("@check", "@perf"))]
    assert len(registered) == len(spec.visible_checks)


def test_requires_names_other_exercises(tmp_path):
    import shutil

    folder = tmp_path / "static-graph-executor"
    shutil.copytree(EXERCISES[[p.name for p in EXERCISES].index("static-graph-executor")], folder)
    toml = folder / "exercise.toml"
    toml.write_text(toml.read_text().replace("tags = [", 'requires = ["Not An Id"]\ntags = [', 1))
    with pytest.raises(SpecError, match='requires names "Not An Id"'):
        load_exercise(folder)
    toml.write_text(toml.read_text().replace('"Not An Id"', '"scalar-autograd"'))
    assert load_exercise(folder).requires == ["scalar-autograd"]
