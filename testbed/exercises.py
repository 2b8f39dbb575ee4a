"""Tiny exercises on disk: a content root of two (one answer, one that needs a GPU) and an
adder folder whose every part a test can override to make it invalid."""
from __future__ import annotations

import textwrap
from pathlib import Path

TINY_TOML = """id = "{slug}"
version = 1
difficulty = "easy"
tags = ["test"]
points = 10
gpu = {gpu}

[title]
en = "Answer"
zh-hans = "答案"

[summary]
en = "Return the answer."
zh-hans = "返回答案。"

[limits]
cpu_s = 10
wall_s = 20
memory_mb = 256
"""
TINY_CHECKS = '''from grader.harness import check, equal


@check(points=1)
def gives_the_answer(student, reference, rng):
    equal(student.answer(), reference.answer(), what={"en": "answer()", "zh-hans": "answer()"})
'''
SOLUTION = "def answer():\n    return 42\n"


def tiny_content(root: Path) -> Path:
    for slug, gpu in (("tiny-answer", "false"), ("tiny-gpu-answer", "true")):
        folder = root / "coding" / slug
        folder.mkdir(parents=True)
        (folder / "exercise.toml").write_text(TINY_TOML.format(slug=slug, gpu=gpu))
        (folder / "statement.md").write_text("Write `answer()`.\n")
        (folder / "statement.zh-hans.md").write_text("写出 `answer()`。\n")
        (folder / "starter.py").write_text("def answer():\n    return 0\n")
        (folder / "solution.py").write_text(SOLUTION)
        (folder / "checks.py").write_text(TINY_CHECKS)
    return root


TOML = """\
id = "tiny-adder"
version = 1
difficulty = "easy"
tags = ["test"]
points = 10

[title]
en = "Add"
zh-hans = "加法"

[summary]
en = "Add two numbers."
zh-hans = "两数相加。"

[limits]
cpu_s = 5
wall_s = 10
memory_mb = 256

[checks]
visible = ["adds_small_numbers"]
"""

CHECKS = """\
from grader.harness import check, close

@check(points=1)
def adds_small_numbers(student, reference, rng):
    close(student.add(2, 3), reference.add(2, 3))

@check(points=2)
def adds_random_numbers(student, reference, rng):
    for _ in range(5):
        a, b = float(rng.normal()), float(rng.normal())
        close(student.add(a, b), reference.add(a, b))
"""


ADDER_SOLUTION = "def add(a, b):\n    return a + b\n"


def make_exercise(folder: Path, *, toml: str = TOML, checks: str = CHECKS, solution: str = ADDER_SOLUTION,
                  files: dict[str, str] | None = None, omit: tuple[str, ...] = ()) -> Path:
    """A small valid exercise folder; override any part to make it invalid."""
    folder.mkdir(parents=True, exist_ok=True)
    content = {
        "exercise.toml": toml,
        "statement.md": "# Add\n",
        "statement.zh-hans.md": "# 加法\n",
        "starter.py": "def add(a, b):\n    return 0\n",
        "solution.py": solution,
        "checks.py": checks,
        **(files or {}),
    }
    for name, text in content.items():
        if name in omit:
            continue
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return folder
