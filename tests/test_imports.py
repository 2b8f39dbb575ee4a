"""Every module of the tree says what it needs at its top: no import tucked into a function,
where it would hide a cycle or a slow start. The few that must wait say why below."""
from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREES = ("platform", "grader", "sandbox", "graphdojo", "bench", "testbed")

# (file, function) -> why its imports must wait until it runs. Keep this short.
WAITING_IMPORTS = {
    ("sandbox/__init__.py", "open_sandbox"): "each backend brings its own system libraries (the docker SDK, "
    "seccomp): only the chosen one is imported",
    ("sandbox/__init__.py", "docker_available"): "the docker SDK is optional: `make run` works without it",
    ("sandbox/__init__.py", "remove_orphaned_containers"): "the docker SDK is optional (as above)",
    ("bench/bench_leaderboards.py", "setup_django"): "Django's app registry: models import after "
    "django.setup(), which only a chosen benchmark runs",
    ("bench/bench_leaderboards.py", "main"): "Django's app registry (as above)",
    ("bench/bench_similarity.py", "render_time"): "Django's app registry (as above)",
    ("bench/bench_similarity.py", "_assignment_with_students"): "Django's app registry (as above)",
    ("bench/bench_similarity.py", "main"): "the platform's modules are importable once the benchmark "
    "has set Django up",
    ("testbed/processes.py", "kill_pool_child"): "the Celery app reads Django's settings: only a fault test, "
    "with its settings pointed at the site, asks the worker for its pool (bench_grading imports this module bare)",
}


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
