"""Arrows only go down (platform -> grader -> sandbox), and the judge, which runs inside a
sandbox, reaches only the part of sandbox that is sent there: the runtime (protocol.RUNTIME_MODULES)."""
from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from sandbox.protocol import RUNTIME_MODULES

ROOT = Path(__file__).resolve().parents[2]


def imports_in(folder: Path) -> Iterator[tuple[str, str]]:
    """(file, module imported) for every absolute import under ``folder``, at any depth of the code."""
    for file in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"), str(file))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            yield from ((str(file.relative_to(ROOT)), name) for name in names)


def test_the_sandbox_knows_nothing_of_grading_nor_of_the_web():
    upward = [(file, name) for file, name in imports_in(ROOT / "sandbox")
              if name.split(".")[0] in ("grader", "django", "celery", "rest_framework")]
    assert not upward, upward


def test_the_judge_imports_only_the_runtime_a_sandbox_holds():
    runtime = {f"sandbox.{name}" for name in RUNTIME_MODULES}
    judge = list(imports_in(ROOT / "grader" / "harness"))
    outside = [(file, name) for file, name in judge if name.split(".")[0] == "sandbox" and name not in runtime]
    assert not outside, outside
    assert any(name in runtime for _, name in judge)
