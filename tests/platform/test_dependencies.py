"""The platform's apps depend one way: no cycle between apps (and no import tucked into a
function to dodge one: tests/test_imports.py), and the sandbox is reached only through grader.

The README's table of the apps is this graph: `python tests/platform/test_dependencies.py`
writes it again, and a test fails while it differs."""
from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PLATFORM = ROOT / "platform"
README = ROOT / "README.md"
PROJECT = "config"  # the settings and the URLs: above every app, so in no table of them
TABLE_START = "<!-- the apps: `python tests/platform/test_dependencies.py` writes this table from the code -->"
TABLE_END = "<!-- end of the apps -->"
APPS = sorted(p.name for p in PLATFORM.iterdir() if p.is_dir() and (p / "__init__.py").exists())
RELATIONS = {"ForeignKey", "OneToOneField", "ManyToManyField"}


def platform_modules() -> Iterator[tuple[str, Path, ast.Module]]:
    """(app, file, syntax tree) of every module of the platform; migrations are history, not code."""
    for file in sorted(PLATFORM.rglob("*.py")):
        relative = file.relative_to(PLATFORM)
        if "migrations" in relative.parts:
            continue
        yield relative.parts[0], file, ast.parse(file.read_text(encoding="utf-8"), str(file))


def imported_modules(tree: ast.Module) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module


def related_models(tree: ast.Module) -> Iterator[str]:
    """"app.Model" strings that relations name: a dependency as real as an import."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in RELATIONS:
            target = node.args[0] if node.args else None
            if isinstance(target, ast.Constant) and isinstance(target.value, str) and "." in target.value:
                yield target.value


def app_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {app: set() for app in APPS}
    for app, _file, tree in platform_modules():
        if app not in graph:
            continue
        names = [*imported_modules(tree), *related_models(tree)]
        graph[app].update(n.split(".")[0] for n in names if n.split(".")[0] in graph and n.split(".")[0] != app)
    return graph


def cycle_in(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a path that ends where it starts, or None."""
    state: dict[str, str] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = "open"
        stack.append(node)
        for following in sorted(graph[node]):
            if state.get(following) == "open":
                return stack[stack.index(following):] + [following]
            if following not in state and (found := visit(following)):
                return found
        state[node] = "done"
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def app_summary(app: str) -> str:
    """The first paragraph of the app's AppConfig docstring (or, for a plain package, its own)."""
    for file in (PLATFORM / app / "apps.py", PLATFORM / app / "__init__.py"):
        if file.exists():
            tree = ast.parse(file.read_text(encoding="utf-8"))
            classes = [node for node in tree.body if isinstance(node, ast.ClassDef)]
            docstring = ast.get_docstring(classes[0] if classes else tree)
            if docstring:
                return " ".join(docstring.split("\n\n")[0].split())
    return ""


def app_table(graph: dict[str, set[str]]) -> str:
    """The apps as a Markdown table, the lowest first: each with the apps it imports."""
    apps = {app: following - {PROJECT} for app, following in graph.items() if app != PROJECT}
    floor: dict[str, int] = {}
    while len(floor) < len(apps):  # an app stands one floor above the highest it imports (no cycle: checked)
        floor.update({app: 1 + max((floor[d] for d in following), default=0) for app, following in apps.items()
                      if app not in floor and following <= set(floor)})
    rows = [f"| `{app}` | {', '.join(sorted(apps[app], key=lambda d: (-floor[d], d)))} | {app_summary(app)} |"
            for app in sorted(apps, key=lambda a: (floor[a], a))]
    return "\n".join(["| app | imports | what it holds |", "|---|---|---|", *rows])


def readme_table(readme: str) -> str:
    return readme.split(TABLE_START, 1)[1].split(TABLE_END, 1)[0].strip("\n")


def readme_with_table(readme: str, table: str) -> str:
    before, rest = readme.split(TABLE_START, 1)
    _old, after = rest.split(TABLE_END, 1)
    return f"{before}{TABLE_START}\n{table}\n{TABLE_END}{after}"


def test_the_checker_finds_a_cycle():
    assert cycle_in({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle_in({"a": {"b"}, "b": set()}) is None


def test_the_apps_depend_one_way():
    graph = app_graph()
    assert {"accounts", "catalog", "grading", "workbench"} <= set(graph), graph
    assert cycle_in(graph) is None, f"apps import each other in a cycle: {' → '.join(cycle_in(graph) or [])}"


def test_grading_sits_below_the_pages_that_use_it():
    graph = app_graph()
    assert graph["grading"] <= {"accounts", "catalog"}, graph["grading"]
    assert graph["catalog"] <= {"accounts"}, graph["catalog"]
    assert "grading" in graph["workbench"] and "grading" in graph["interviews"]


def test_the_platform_reaches_the_sandbox_only_through_grader():
    direct = [str(file.relative_to(PLATFORM)) for _app, file, tree in platform_modules()
              if any(name == "sandbox" or name.startswith("sandbox.") for name in imported_modules(tree))]
    assert not direct, f"import sandbox through grader (grader.host): {direct}"


def test_the_platform_reads_the_judge_only_through_the_contract():
    """The judge's messages, rows and names come from grader.contract; the harness runs in the
    sandbox and is no module of the web process, not even by a name handed to importlib."""
    reaching = []
    for _app, file, tree in platform_modules():
        names = list(imported_modules(tree)) + [
            node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)
        ]
        if any(name == "grader.harness" or name.startswith("grader.harness.") for name in names):
            reaching.append(str(file.relative_to(PLATFORM)))
    assert not reaching, f"read the judge's messages and rows from grader.contract: {reaching}"


def test_every_app_says_what_it_holds():
    silent = [app for app in APPS if app != PROJECT and not app_summary(app)]
    assert not silent, f"give these a docstring (their AppConfig's, or the package's): {silent}"


def test_the_readme_table_is_the_graph():
    assert readme_table(README.read_text(encoding="utf-8")) == app_table(app_graph()), (
        "the README's table of the apps differs from the code: run `python tests/platform/test_dependencies.py`")


if __name__ == "__main__":
    README.write_text(readme_with_table(README.read_text(encoding="utf-8"), app_table(app_graph())), encoding="utf-8")
    print(f"wrote the apps' table into {README.relative_to(ROOT)}")
