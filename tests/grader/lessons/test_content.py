"""Lesson folders: loading, every reference checked, code blocks proven in the sandbox."""
import shutil
from pathlib import Path

import pytest

from grader.contract import LANGUAGES
from grader.lessons import ARTICLE_SECTIONS, check_lessons, split_segments, validate_lessons
from tests.sandbox.backends import backend_sandbox

ROOT = Path(__file__).resolve().parents[3]


def test_the_repository_lessons_are_sound_and_cover_every_section_of_the_article():
    result = check_lessons(ROOT / "exercises")
    assert result.ok, result.problems
    assert {section for lesson in result.lessons for section in lesson.covers} == set(ARTICLE_SECTIONS)
    for lesson in result.lessons:
        assert all(lesson.body[lang].strip() and lesson.title[lang] for lang in LANGUAGES), lesson.slug
        assert lesson.quiz, f"{lesson.slug} has no short quiz"
    names = {s.text for lesson in result.lessons for s in lesson.segments("en") if s.kind == "viz"}
    assert names == {"expression-graph", "static-vs-dynamic", "compile-flow", "radar", "selection-guide"}


def test_segments_split_markdown_runnable_code_claimed_output_and_markers():
    text = ("Intro.\n\n```python run\nprint(1)\n```\n\n```output\n1\n```\n\n::: viz radar\n\n"
            "```python\nnot run\n```\n::: questions a-b  c-d\nEnd.\n")
    segments = split_segments(text)
    assert [(s.kind, s.runnable) for s in segments] == [
        ("markdown", False), ("code", True), ("viz", False), ("code", False), ("questions", False), ("markdown", False)]
    assert segments[1].output == "1\n" and segments[2].text == "radar" and segments[4].text == "a-b c-d"


@pytest.fixture
def content(tmp_path):
    """A copy of the repository content whose lessons a test may break."""
    target = tmp_path / "exercises"
    shutil.copytree(ROOT / "exercises", target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def test_broken_references_are_reported_by_file(content):
    lesson = content / "lessons" / "define-by-run"
    (lesson / "zh-hans.md").unlink()
    other = content / "lessons" / "debugging"
    toml = (other / "lesson.toml").read_text()
    toml = toml.replace('quiz = ["', 'quiz = ["no-such-question", "').replace(
        'prerequisites = ["define-then-run", "define-by-run"]', 'prerequisites = ["interview-prep"]')
    (other / "lesson.toml").write_text(toml)
    (other / "en.md").write_text((other / "en.md").read_text() + "\nSee [this](/exercises/nope/) and [that](http://x.org).\n")
    problems = check_lessons(content).problems
    assert any("zh-hans.md is missing" in p for p in problems["define-by-run"])
    found = "\n".join(problems["debugging"])
    assert "quiz names 'no-such-question'" in found
    assert "prerequisite 'interview-prep' must come earlier on the path" in found
    assert "no exercise 'nope'" in found and "use https" in found


def test_the_selection_guide_names_only_its_own_options_and_pages(content):
    guide = content / "lessons" / "choosing" / "selection-guide.toml"
    text = guide.read_text()
    assert 'requires = ["export"]' in text   # "outside Python" is a hard constraint
    text = text.replace('requires = ["export"]', 'requires = ["onnx"]', 1).replace(
        'scores = { jax = 3, export = 1 }', 'scores = { jax = 3, tflite = 1 }', 1).replace(
        'href = "/exercises/vectorise-a-loop/"', 'href = "/exercises/no-such-exercise/"', 1)
    guide.write_text(text)
    found = "\n".join(check_lessons(content).problems["choosing"])
    assert "requires names 'onnx', which is not an option" in found
    assert "scores name 'tflite', which is not an option" in found
    assert "link '/exercises/no-such-exercise/': no exercise 'no-such-exercise'" in found


def test_a_section_without_a_lesson_is_reported(content):
    shutil.rmtree(content / "lessons" / "debugging")
    problems = check_lessons(content).problems
    assert any("debugging (调试体验" in p for p in problems["_path"])


def test_a_wrong_claimed_output_fails_in_the_sandbox(content, requires):
    sandbox = backend_sandbox("local", requires)
    lesson = content / "lessons" / "computation-graphs"
    for lang in LANGUAGES:
        path = lesson / f"{lang}.md"
        path.write_text(path.read_text().replace("9.0 16.0", "9.0 15.0"))
    for other in (content / "lessons").iterdir():   # prove just this lesson's code (its links now dangle)
        if other.is_dir() and other.name != "computation-graphs":
            shutil.rmtree(other)
    problems = [p for p in validate_lessons(content, sandbox)["computation-graphs"] if "link" not in p]
    assert len(problems) == 1 and "prints '<Node y: mul float64 []>\\n9.0 16.0'" in problems[0], problems
