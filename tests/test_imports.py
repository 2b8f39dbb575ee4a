"""Every module of the tree says what it needs at its top: no import tucked into a function,
where it would hide a cycle or a slow start. The few that must wait say why below."""
from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREES = ("platform", "grader", "sandbox", "graphdojo", "bench", "testbed")

# (file, function) -> why its imports must wait until it runs. Keep this short.
WAITING_IMPORTS: dict[tuple[str, str], str] = {}


def modules() -> Iterator[tuple[str, ast.Module]]:
    for tree in TREES:
        for file in sorted((ROOT / tree).rglob("*.py")):
            yield file.relative_to(ROOT).as_posix(), ast.parse(file.read_text(encoding="utf-8"), str(file))


def imports_in_functions(tree: ast.Module) -> Iterator[tuple[str, int]]:
    """(function, line) of every import inside a function, nested ones included."""
    for function in ast.walk(tree):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(function):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    yield function.name, node.lineno


def test_the_checker_finds_an_import_in_a_function():
    tree = ast.parse("import os\n\ndef f():\n    def g():\n        from json import dumps\n    return g\n")
    assert sorted(imports_in_functions(tree)) == [("f", 5), ("g", 5)]


def test_no_import_hides_in_a_function():
    hidden = sorted({f"{path}:{line} in {function}()" for path, tree in modules()
                     for function, line in imports_in_functions(tree) if (path, function) not in WAITING_IMPORTS})
    assert not hidden, f"import at the top of the module (or say why it must wait in WAITING_IMPORTS): {hidden}"


def test_every_waiting_import_is_still_there():
    found = {(path, function) for path, tree in modules() for function, _line in imports_in_functions(tree)}
    assert not set(WAITING_IMPORTS) - found, f"no longer waiting, drop: {sorted(set(WAITING_IMPORTS) - found)}"


def test_the_languages_are_listed_once():
    """grader.contract lists the site's languages; everyone else imports that list."""
    listed = [path for path, tree in modules() for node in tree.body
              if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "LANGUAGES" for t in node.targets)
              and isinstance(node.value, (ast.Tuple, ast.List))]
    assert listed == ["grader/contract.py"], listed
