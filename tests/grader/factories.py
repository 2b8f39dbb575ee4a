"""Factories for grader tests: exercise folders on disk, and the real sandbox backends."""
from __future__ import annotations

import textwrap
from pathlib import Path

from sandbox import Sandbox
from tests.sandbox.backends import backend_sandbox

REPO = Path(__file__).resolve().parents[2]
STATIC_GRAPH = REPO / "exercises" / "coding" / "static-graph-executor"
GRADING_BACKENDS = ["local", "docker-runc"]

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
ADD_SOLUTION = "def add(a, b):\n    return a + b\n"


def make_exercise(folder: Path, *, toml: str = TOML, checks: str = CHECKS, solution: str = ADD_SOLUTION,
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


def grading_sandbox(name: str, requires) -> Sandbox:
    return backend_sandbox(name, requires)
