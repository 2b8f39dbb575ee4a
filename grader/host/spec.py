"""An exercise on disk: ``exercises/coding/<slug>/``, loaded and validated.

The folder holds::

    exercise.toml           id, version, titles, limits, visible checks, perf thresholds, mutants
    statement.md            the statement in English
    statement.zh-hans.md    the statement in Simplified Chinese
    starter.py              what the student starts from (must not pass)
    solution.py             the reference solution (hidden; must be ACCEPTED)
    checks.py               correctness and performance cases, against grader.harness
    mutants/<name>.py       known-wrong solutions; exercise.toml [mutants] says the verdict each gets
    mutants/why.toml        optional: why each mutant fails, in every language (a table per mutant,
                            ``[name] en = "..." zh-hans = "..."``); a student who solved the exercise
                            reads them as its common wrong answers

exercise.toml::

    id = "static-graph-executor"      # stable: survives renaming the folder
    version = 1
    difficulty = "easy"               # easy | medium | hard
    tags = ["static-graph"]
    requires = ["scalar-autograd"]    # optional: ids of exercises the list suggests first
    points = 100
    gpu = false
    [title]   en = "..."  zh-hans = "..."
    [summary] en = "..."  zh-hans = "..."
    [limits]  cpu_s = 10  wall_s = 20  memory_mb = 512      # any field of sandbox.Limits
    [checks]  visible = ["runs_the_article_example"]      # the rest are hidden
    [perf.execute_a_long_chain]                            # one table per @perf case
    baseline = "reference"    at_most = 2.0    budget_s = 10
    [mutants] insertion_order = "WRONG_ANSWER"
    [[rules]]                                              # optional: what a solution may not use
    modules = ["torch.utils.checkpoint"]                   # and/or attributes = [...], calls = [...]
    mutants = ["uses_torch_checkpoint"]                    # the mutants that prove the rule
    reason.en = "..."   reason.zh-hans = "..."             # why, shown with the refusal
    [[hints]]                                              # optional: revealed one at a time, in order
    en = "..."   zh-hans = "..."

checks.py is never imported here (it may need torch); its @check/@perf functions and their
points are read from its syntax tree. Every mistake raises SpecError with one message that
names the file and the key.
"""
from __future__ import annotations

import ast
import dataclasses
import functools
import re
import threading
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from grader.content_root import DIFFICULTIES, folder_digest
from grader.contract import CASE_DECORATORS, LANGUAGES, Kind, PerfTerms, Rule, violations
from grader.host.check_text import untranslated
from sandbox import Limits

REQUIRED_FILES = ("exercise.toml", "statement.md", "statement.zh-hans.md", "starter.py", "solution.py", "checks.py")
_ID = re.compile(r"^[a-z0-9][a-z0-9-]{1,62}$")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_TOP_KEYS = {
    "id",
    "version",
    "difficulty",
    "tags",
    "requires",
    "points",
    "gpu",
    "title",
    "summary",
    "limits",
    "checks",
    "perf",
    "mutants",
    "rules",
    "hints",
}
_RULE_KEYS = {"modules", "attributes", "calls", "reason", "mutants"}
_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
_PERF_KEYS = {"baseline", "at_most", "at_least", "budget_s", "margin", "clock"}
# How a timed call is measured: "cpu", the CPU every task of the program uses (a busy machine
# cannot inflate it; the judge falls back to the wall clock where a sandbox shows no per-task
# CPU), or "wall", for work that waits on something else (a GPU, a sleep the case times).
CLOCKS = ("cpu", "wall")
# Slack in the student's favour before "too slow": two worker processes on a shared machine
# differ by a few percent for reasons that are not the student's (core, cache, neighbours).
DEFAULT_MARGIN = 0.05


class SpecError(ValueError):
    """An exercise folder is not valid; str() is one message naming the file and the key."""


@dataclasses.dataclass(frozen=True)
class CheckSpec:
    name: str
    points: float
    visible: bool
    perf: bool = False


@dataclasses.dataclass(frozen=True)
class PerfSpec:
    """A performance threshold: student time / baseline time must be at most ``at_most``."""

    name: str
    baseline: str  # "reference", or the name of a baseline the perf case offers
    at_most: float  # ratio student/baseline; "at_least = 2" (2x faster) is stored as 0.5
    budget_s: float
    margin: float  # relative slack in the student's favour before calling it too slow
    speedup: float | None = None  # the at_least value as written, for messages
    clock: str = "cpu"

    def terms(self) -> PerfTerms:
        """The threshold as the judge reads it from the manifest."""
        return {
            "name": self.name,
            "baseline": self.baseline,
            "at_most": self.at_most,
            "budget_s": self.budget_s,
            "margin": self.margin,
            "speedup": self.speedup,
            "clock": self.clock,
        }


@dataclasses.dataclass(frozen=True)
class RuleSpec:
    """What a solution may not use (exercise.toml ``[[rules]]``), and the mutants that prove it is refused."""

    modules: list[str]
    attributes: list[str]
    calls: list[str]
    reason: dict[str, str]
    mutants: list[str]

    def terms(self) -> Rule:
        """The rule as the judge reads it from the manifest."""
        return {"modules": list(self.modules), "attributes": list(self.attributes), "calls": list(self.calls),
                "reason": dict(self.reason)}


@dataclasses.dataclass(frozen=True)
class MutantSpec:
    name: str
    path: Path
    code: str
    expected: Kind
    why: dict[str, str] = dataclasses.field(default_factory=dict)  # language -> why it fails


@dataclasses.dataclass(frozen=True)
class ExerciseSpec:
    id: str
    slug: str
    version: int
    title: dict[str, str]
    summary: dict[str, str]
    difficulty: str
    tags: list[str]
    points: int
    limits: Limits
    gpu: bool
    statement: dict[str, str]
    starter: str
    solution: str
    checks_source: str
    checks: list[CheckSpec]
    perf: list[PerfSpec]
    mutants: list[MutantSpec]
    path: Path
    digest: str
    requires: list[str] = dataclasses.field(default_factory=list)  # ids of exercises to do first
    # name -> {language: title} for each check whose decorator gives a title: stored on the
    # version when it is published, so pages name checks without reading checks.py again.
    check_titles: dict[str, dict[str, str]] = dataclasses.field(default_factory=dict)
    rules: list[RuleSpec] = dataclasses.field(default_factory=list)  # what a solution may not use
    hints: list[dict[str, str]] = dataclasses.field(default_factory=list)  # {language: text}, shown in order

    @property
    def visible_checks(self) -> list[str]:
        return [c.name for c in self.checks if c.visible]

    @functools.cached_property
    def uses_engines(self) -> bool:
        """Whether the checks or the reference import our reference engines (then they ship in the bundle)."""
        return any(_imports(source, "grader.engines") for source in (self.checks_source, self.solution))

    @property
    def preload(self) -> tuple[str, ...]:
        """What the sandbox imports before the job, for the judge's workers to fork with:
        numpy always (the harness needs it), torch when the reference or the checks use it, or
        the checks send tensors (no worker imports a framework after its start)."""
        torch = any(_imports(source, "torch") for source in (self.checks_source, self.solution)) or any(
            _imports(self.checks_source, f"grader.harness.{name}") for name in ("tensor", "gradients"))
        return ("numpy", "torch") if torch else ("numpy",)


def load_exercise(path: str | Path) -> ExerciseSpec:
    """Load and validate the exercise folder at ``path``."""
    path = Path(path)
    if not path.is_dir():
        raise SpecError(f"{path}: not an exercise folder (it does not exist or is not a directory)")
    for name in REQUIRED_FILES:
        if not (path / name).is_file():
            raise SpecError(f"{name}: missing; every exercise folder needs {', '.join(REQUIRED_FILES)}")
    texts = {name: _read_text(path, name) for name in REQUIRED_FILES}
    try:
        data = tomllib.loads(texts["exercise.toml"])
    except tomllib.TOMLDecodeError as error:
        raise SpecError(f"exercise.toml: not valid TOML: {error}") from None

    toml = _Toml(data)
    toml.no_unknown_keys("", data, _TOP_KEYS)
    exercise_id = toml.string("id")
    if not _ID.match(exercise_id):
        raise SpecError(f'exercise.toml: id must be lowercase letters, digits and dashes, got "{exercise_id}"')
    version = toml.integer("version", minimum=1)
    difficulty = toml.string("difficulty")
    if difficulty not in DIFFICULTIES:
        raise SpecError(f'exercise.toml: difficulty must be one of {", ".join(DIFFICULTIES)}, got "{difficulty}"')
    tags = toml.strings("tags")
    requires = toml.strings("requires", default=[])
    for required in requires:
        if not _ID.match(required) or required == exercise_id:
            raise SpecError(f'exercise.toml: requires names "{required}"; list the ids of other exercises to do first')
    points = toml.integer("points", minimum=0)
    gpu = toml.boolean("gpu", default=False)
    title = toml.languages("title")
    summary = toml.languages("summary")
    limits = _limits(toml, data.get("limits", {}))

    declared, said_visible = _declared_checks(texts["checks.py"])
    problems = untranslated(texts["checks.py"])
    if problems:
        raise SpecError(
            "checks.py: every text a check shows the student needs English and Chinese with the same "
            "placeholders:\n  " + "\n  ".join(problems))
    visible = set(toml.strings("checks.visible", default=[]))
    toml.no_unknown_keys("checks", data.get("checks", {}), {"visible"})
    for name in sorted(visible):
        if name not in declared or declared[name][1]:
            raise SpecError(
                f'exercise.toml: [checks].visible names "{name}", but checks.py has no @check function of that name'
            )
    for name, said in said_visible.items():
        if said != (name in visible):
            raise SpecError(
                f'exercise.toml: [checks].visible {"lacks" if said else "lists"} "{name}", '
                f"but checks.py says @check(visible={said}); make them agree"
            )
    perf = _perf_specs(toml, data.get("perf", {}), declared)
    checks = [
        CheckSpec(name=name, points=pts, visible=name in visible, perf=is_perf)
        for name, (pts, is_perf) in declared.items()
    ]
    if not any(not c.perf for c in checks):
        raise SpecError("checks.py: no @check function; an exercise needs at least one correctness check")

    _compiles(path, "starter.py", texts["starter.py"])
    _compiles(path, "solution.py", texts["solution.py"])
    mutants = _explained(path, _mutants(path, toml, data.get("mutants", {})))
    rules = _rules(data.get("rules", []), mutants, texts)
    hints = _hints(data.get("hints", []))

    return ExerciseSpec(
        id=exercise_id,
        slug=path.resolve().name,
        version=version,
        title=title,
        summary=summary,
        difficulty=difficulty,
        tags=tags,
        points=points,
        limits=limits,
        gpu=gpu,
        statement={"en": texts["statement.md"], "zh-hans": texts["statement.zh-hans.md"]},
        starter=texts["starter.py"],
        solution=texts["solution.py"],
        checks_source=texts["checks.py"],
        checks=checks,
        perf=perf,
        mutants=mutants,
        path=path,
        digest=folder_digest(path),
        requires=requires,
        check_titles=check_titles(texts["checks.py"]),
        rules=rules,
        hints=hints,
    )


# Of a stored spec (stored_spec): a version published under another one is loaded from its files.
STORED_FORMAT = 1


def stored_spec(spec: ExerciseSpec) -> dict[str, Any]:
    """``spec``, validated, as JSON to store beside the exercise's files when it is published;
    ``spec_from_stored`` makes it again without validating anything."""
    return {
        "format": STORED_FORMAT,
        "id": spec.id, "slug": spec.slug, "version": spec.version, "title": dict(spec.title),
        "summary": dict(spec.summary), "difficulty": spec.difficulty, "tags": list(spec.tags),
        "points": spec.points, "limits": dataclasses.asdict(spec.limits), "gpu": spec.gpu,
        "checks": [dataclasses.asdict(check) for check in spec.checks],
        "perf": [dataclasses.asdict(case) for case in spec.perf],
        "mutants": {mutant.name: str(mutant.expected) for mutant in spec.mutants},
        "why": {mutant.name: dict(mutant.why) for mutant in spec.mutants if mutant.why},
        "digest": spec.digest, "requires": list(spec.requires), "check_titles": dict(spec.check_titles),
        "rules": [dataclasses.asdict(rule) for rule in spec.rules],
        "hints": [dict(hint) for hint in spec.hints],
    }


def spec_from_stored(data: Mapping[str, Any], files: Mapping[str, str], path: Path) -> ExerciseSpec:
    """The spec ``stored_spec`` stored, with the texts from ``files`` (the version's folder, by
    relative path) and ``path`` where that folder is or would be. Nothing is validated again:
    that happened when the version was published. SpecError for a spec of another format."""
    if data.get("format") != STORED_FORMAT:
        raise SpecError(f"a stored spec of format {data.get('format')!r}; this host reads {STORED_FORMAT}")
    return ExerciseSpec(
        id=data["id"], slug=data["slug"], version=data["version"], title=dict(data["title"]),
        summary=dict(data["summary"]), difficulty=data["difficulty"], tags=list(data["tags"]),
        points=data["points"], limits=Limits(**data["limits"]), gpu=data["gpu"],
        statement={"en": files["statement.md"], "zh-hans": files["statement.zh-hans.md"]},
        starter=files["starter.py"], solution=files["solution.py"], checks_source=files["checks.py"],
        checks=[CheckSpec(**check) for check in data["checks"]],
        perf=[PerfSpec(**case) for case in data["perf"]],
        mutants=[MutantSpec(name=name, path=path / "mutants" / f"{name}.py", code=files[f"mutants/{name}.py"],
                            expected=Kind(expected), why=dict(data.get("why", {}).get(name, {})))
                 for name, expected in data["mutants"].items()],
        path=path, digest=data["digest"], requires=list(data["requires"]),
        check_titles={name: dict(title) for name, title in data["check_titles"].items()},
        rules=[RuleSpec(**rule) for rule in data["rules"]],
        hints=[dict(hint) for hint in data.get("hints", [])],  # none stored before hints existed
    )


def _hints(hints: Any) -> list[dict[str, str]]:
    """``[[hints]]``: each in every language, none empty, in the order they are revealed."""
    if not isinstance(hints, list):
        raise SpecError("exercise.toml: hints must be [[hints]] tables, each with en and zh-hans")
    found = []
    for number, hint in enumerate(hints, 1):
        if not isinstance(hint, dict) or set(hint) != set(LANGUAGES) or not all(
            isinstance(hint[lang], str) and hint[lang].strip() for lang in LANGUAGES
        ):
            raise SpecError(f"exercise.toml: hint {number} needs a text in each of {' and '.join(LANGUAGES)}, "
                            f"got {_show(hint)}")
        found.append({lang: hint[lang].strip() for lang in LANGUAGES})
    return found


def _read_text(path: Path, name: str) -> str:
    try:
        return (path / name).read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise SpecError(f"{name}: not UTF-8 text ({error.reason} at byte {error.start})") from None


class _Toml:
    """Typed reads from exercise.toml, each failing with a message that names the key."""

    def __init__(self, data: dict[str, Any]):
        self.data = data

    def _get(self, dotted: str, default: Any = ...) -> Any:
        node: Any = self.data
        for part in dotted.split("."):
            if not isinstance(node, dict) or part not in node:
                if default is not ...:
                    return default
                raise SpecError(f"exercise.toml: {_key(dotted)} is missing")
            node = node[part]
        return node

    def string(self, dotted: str) -> str:
        value = self._get(dotted)
        if not isinstance(value, str) or not value.strip():
            raise SpecError(f"exercise.toml: {_key(dotted)} must be a non-empty string, got {_show(value)}")
        return value

    def integer(self, dotted: str, minimum: int) -> int:
        value = self._get(dotted)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise SpecError(f"exercise.toml: {_key(dotted)} must be a whole number >= {minimum}, got {_show(value)}")
        return value

    def boolean(self, dotted: str, default: bool) -> bool:
        value = self._get(dotted, default)
        if not isinstance(value, bool):
            raise SpecError(f"exercise.toml: {_key(dotted)} must be true or false, got {_show(value)}")
        return value

    def strings(self, dotted: str, default: Any = ...) -> list[str]:
        value = self._get(dotted, default)
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise SpecError(f"exercise.toml: {_key(dotted)} must be a list of strings, got {_show(value)}")
        return list(value)

    def languages(self, table: str) -> dict[str, str]:
        value = self._get(table)
        if not isinstance(value, dict):
            raise SpecError(f"exercise.toml: [{table}] must be a table with keys {' and '.join(LANGUAGES)}")
        self.no_unknown_keys(table, value, set(LANGUAGES))
        return {lang: self.string(f"{table}.{lang}") for lang in LANGUAGES}

    def number(self, dotted: str, positive: bool = True) -> float:
        value = self._get(dotted)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise SpecError(f"exercise.toml: {_key(dotted)} must be a number, got {_show(value)}")
        if positive and not value > 0:
            raise SpecError(f"exercise.toml: {_key(dotted)} must be greater than 0, got {value}")
        return value

    @staticmethod
    def no_unknown_keys(table: str, value: Any, allowed: set[str]) -> None:
        if not isinstance(value, dict):
            raise SpecError(f"exercise.toml: [{table}] must be a table, got {_show(value)}")
        for key in value:
            if key not in allowed:
                where = f"[{table}].{key}" if table else key
                raise SpecError(f"exercise.toml: unknown key {where} (allowed: {', '.join(sorted(allowed))})")


def _key(dotted: str) -> str:
    """``limits.memory_mb`` -> ``[limits].memory_mb``; top-level keys stay bare."""
    table, _, key = dotted.rpartition(".")
    return f"[{table}].{key}" if table else key


def _show(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, dict):
        return "a table"
    return repr(value)


def _limits(toml: _Toml, table: Any) -> Limits:
    fields = {f.name: f for f in dataclasses.fields(Limits)}
    toml.no_unknown_keys("limits", table, set(fields))
    values: dict[str, Any] = {}
    for key in table:
        number = toml.number(f"limits.{key}")
        values[key] = int(number) if fields[key].type in ("int", int) else float(number)
    limits = Limits(**values)
    if limits.wall_s < limits.cpu_s:
        raise SpecError(
            f"exercise.toml: [limits].wall_s ({limits.wall_s}) must be at least [limits].cpu_s ({limits.cpu_s})"
        )
    return limits


def _declared_checks(source: str) -> tuple[dict[str, tuple[float, bool]], dict[str, bool]]:
    """name -> (points, is_perf) for each @check / @perf function in checks.py, in order; and
    name -> visible for checks that state it in the decorator."""
    try:
        tree = _parse(source, "checks.py")
    except SyntaxError as error:
        raise SpecError(f"checks.py: line {error.lineno}: {error.msg}") from None
    found: dict[str, tuple[float, bool]] = {}
    declared_visible: dict[str, ast.expr] = {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for decorator in node.decorator_list:
            call = decorator if isinstance(decorator, ast.Call) else None
            target = call.func if call else decorator
            kind = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", None)
            if kind not in CASE_DECORATORS:
                continue
            points = 1.0
            for keyword in call.keywords if call else []:
                if keyword.arg == "points":
                    try:
                        points = float(ast.literal_eval(keyword.value))
                    except (ValueError, TypeError):
                        raise SpecError(f"checks.py: {node.name}: points must be a literal number") from None
                elif keyword.arg == "visible" and keyword.arg in CASE_DECORATORS[kind]:
                    declared_visible[node.name] = keyword.value
                elif keyword.arg == "title":
                    _literal_title(node.name, keyword.value)
                else:
                    raise SpecError(
                        f"checks.py: @{kind} {node.name}: unknown argument {keyword.arg}; "
                        f"thresholds and baselines belong in exercise.toml [perf.{node.name}]"
                    )
            found[node.name] = (points, kind == "perf")
    return found, {name: _literal_bool(name, expr) for name, expr in declared_visible.items()}


def check_titles(source: str) -> dict[str, dict[str, str]]:
    """name -> {language: title} for each @check / @perf of checks.py that gives a title.

    Read from the source (never imported), so the platform can name checks in the reader's
    language without running exercise code.
    """
    titles = {}
    for node in _parse(source, "checks.py").body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for decorator in node.decorator_list:
            for keyword in decorator.keywords if isinstance(decorator, ast.Call) else []:
                if keyword.arg == "title":
                    titles[node.name] = _literal_title(node.name, keyword.value)
    return titles


def _literal_title(name: str, expr: ast.expr) -> dict[str, str]:
    try:
        value = ast.literal_eval(expr)
    except ValueError:
        value = None
    if not isinstance(value, dict) or not value:
        value = {"": ""}  # refused just below, with the message that says what to write
    title = {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str) and v.strip()}
    if len(title) != len(value):
        raise SpecError(f'checks.py: {name}: title must be a literal dict such as {{"en": "...", "zh-hans": "..."}}')
    unknown = set(title) - set(LANGUAGES)
    if unknown:
        language = sorted(unknown)[0]
        use = " and ".join(f'"{known}"' for known in LANGUAGES)
        raise SpecError(f"checks.py: {name}: title has an unknown language {language!r}; use {use}")
    return title


# CPython 3.11 keeps the AST builder's recursion depth per interpreter, not per thread: two
# threads parsing at once can fail with "SystemError: AST constructor recursion depth
# mismatch" (python/cpython#106905). validate_content grades from several threads.
_AST_LOCK = threading.Lock()


def _parse(source: str, filename: str = "<unknown>") -> ast.Module:
    with _AST_LOCK:
        return ast.parse(source, filename)


def _imports(source: str, package: str) -> bool:
    """Whether ``source`` imports ``package`` or a module in it (read from its syntax tree)."""
    for node in ast.walk(_parse(source)):
        names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        if any(name == package or name.startswith(package + ".") for name in names):
            return True
    return False


def _literal_bool(name: str, expr: ast.expr) -> bool:
    try:
        value = ast.literal_eval(expr)
    except ValueError:
        value = None
    if not isinstance(value, bool):
        raise SpecError(f"checks.py: @check {name}: visible must be True or False")
    return value


def _perf_specs(toml: _Toml, table: Any, declared: dict[str, tuple[float, bool]]) -> list[PerfSpec]:
    toml.no_unknown_keys("perf", table, set(table) if isinstance(table, dict) else set())
    specs = []
    for name, case in table.items():
        if name not in declared or not declared[name][1]:
            raise SpecError(f"exercise.toml: [perf.{name}] has no @perf function of that name in checks.py")
        toml.no_unknown_keys(f"perf.{name}", case, _PERF_KEYS)
        has = [k for k in ("at_most", "at_least") if k in case]
        if len(has) != 1:
            raise SpecError(f"exercise.toml: [perf.{name}] needs exactly one threshold, at_most or at_least")
        if "baseline" not in case:
            raise SpecError(
                f"exercise.toml: [perf.{name}].baseline is missing: "
                'a threshold needs a baseline ("reference" or a name the case offers)'
            )
        baseline = toml.string(f"perf.{name}.baseline")
        threshold = toml.number(f"perf.{name}.{has[0]}")
        clock = toml.string(f"perf.{name}.clock") if "clock" in case else "cpu"
        if clock not in CLOCKS:
            raise SpecError(f'exercise.toml: [perf.{name}].clock must be one of {", ".join(CLOCKS)}, got "{clock}"')
        specs.append(
            PerfSpec(
                name=name,
                baseline=baseline,
                at_most=threshold if has[0] == "at_most" else 1.0 / threshold,
                speedup=threshold if has[0] == "at_least" else None,
                budget_s=toml.number(f"perf.{name}.budget_s") if "budget_s" in case else 10.0,
                margin=toml.number(f"perf.{name}.margin") if "margin" in case else DEFAULT_MARGIN,
                clock=clock,
            )
        )
    for name, (_, is_perf) in declared.items():
        if is_perf and name not in table:
            raise SpecError(
                f"exercise.toml: [perf.{name}] is missing: checks.py declares @perf {name} without a threshold"
            )
    return specs


def _compiles(path: Path, name: str, source: str) -> None:
    try:
        compile(source, name, "exec")
    except SyntaxError as error:
        raise SpecError(f"{name}: line {error.lineno}: {error.msg}") from None


def _mutants(path: Path, toml: _Toml, table: Any) -> list[MutantSpec]:
    toml.no_unknown_keys("mutants", table, set(table) if isinstance(table, dict) else set())
    folder = path / "mutants"
    files = {f.stem: f for f in folder.glob("*.py")} if folder.is_dir() else {}
    for stem in files:
        if stem not in table:
            raise SpecError(f"exercise.toml: [mutants].{stem} is missing: mutants/{stem}.py needs its expected verdict")
    mutants = []
    for name, expected in table.items():
        if not _NAME.match(name) or name not in files:
            raise SpecError(f"exercise.toml: [mutants].{name} names mutants/{name}.py, which does not exist")
        try:
            kind = Kind(expected)
        except ValueError:
            raise SpecError(
                f"exercise.toml: [mutants].{name} must be a verdict "
                f"({', '.join(k.value for k in Kind)}), got {_show(expected)}"
            ) from None
        if kind in (Kind.ACCEPTED, Kind.INTERNAL_ERROR):
            raise SpecError(f"exercise.toml: [mutants].{name} must be a failing verdict, got {kind}")
        mutants.append(
            MutantSpec(name=name, path=files[name], code=_read_text(path, f"mutants/{name}.py"), expected=kind)
        )
    return mutants


def _explained(path: Path, mutants: list[MutantSpec]) -> list[MutantSpec]:
    """``mutants`` with mutants/why.toml's explanations. The file is optional, but one that is
    there explains every mutant in every language: a half-written editorial is a mistake."""
    if not (path / "mutants" / "why.toml").is_file():
        return mutants
    try:
        table = tomllib.loads(_read_text(path, "mutants/why.toml"))
    except tomllib.TOMLDecodeError as error:
        raise SpecError(f"mutants/why.toml: {error}") from None
    names = [mutant.name for mutant in mutants]
    for name in table:
        if name not in names:
            known = ", ".join(names) or "none"
            raise SpecError(f"mutants/why.toml: [{name}] explains no mutant (its mutants: {known})")
    explained = []
    for mutant in mutants:
        why = table.get(mutant.name)
        if not isinstance(why, dict) or set(why) != set(LANGUAGES) or not all(
            isinstance(text, str) and text.strip() for text in why.values()
        ):
            raise SpecError(
                f"mutants/why.toml: [{mutant.name}] must say why it fails in {' and '.join(LANGUAGES)} "
                f"(non-empty strings, no other keys), got {'nothing' if why is None else _show(why)}"
            )
        explained.append(dataclasses.replace(mutant, why={lang: why[lang].strip() for lang in LANGUAGES}))
    return explained


def _rules(table: Any, mutants: list[MutantSpec], texts: dict[str, str]) -> list[RuleSpec]:
    """exercise.toml [[rules]]; the reference and the starter must keep them, and each names its mutants."""
    if not isinstance(table, list) or not all(isinstance(rule, dict) for rule in table):
        raise SpecError("exercise.toml: rules must be tables, written [[rules]]")
    specs = []
    for number, rule in enumerate(table, start=1):
        where = f"[[rules]] number {number}"
        for key in rule:
            if key not in _RULE_KEYS:
                raise SpecError(f"exercise.toml: {where}: unknown key {key} (allowed: {', '.join(sorted(_RULE_KEYS))})")
        names: dict[str, list[str]] = {}
        for key in ("modules", "attributes", "calls"):
            value = rule.get(key, [])
            if not isinstance(value, list) or not all(isinstance(v, str) and _DOTTED.match(v) for v in value):
                raise SpecError(
                    f"exercise.toml: {where}: {key} must be a list of dotted names such as "
                    f'"torch.utils.checkpoint", got {_show(value)}')
            names[key] = list(value)
        if not any(names.values()):
            raise SpecError(f"exercise.toml: {where}: name at least one of modules, attributes or calls")
        reason = rule.get("reason")
        if (not isinstance(reason, dict) or set(reason) != set(LANGUAGES)
                or not all(isinstance(v, str) and v.strip() for v in reason.values())):
            raise SpecError(
                f"exercise.toml: {where}: reason must say why in every language: "
                f"{' and '.join(f'reason.{lang}' for lang in LANGUAGES)}")
        proofs = rule.get("mutants")
        known = {m.name for m in mutants}
        if not isinstance(proofs, list) or not proofs or not all(isinstance(p, str) and p in known for p in proofs):
            raise SpecError(
                f"exercise.toml: {where}: mutants must list the mutants (mutants/<name>.py, each in [mutants]) "
                f"that use what the rule refuses, got {_show(proofs)}")
        specs.append(RuleSpec(reason=dict(reason), mutants=list(proofs), **names))
    terms = [rule.terms() for rule in specs]
    for name in ("solution.py", "starter.py"):
        with _AST_LOCK:
            found = violations(texts[name], terms)
        if found:
            raise SpecError(
                f"{name}: line {found[0].line}: uses {found[0].api}, which [[rules]] number {found[0].rule + 1} "
                "refuses; it must keep the exercise's own rules")
    return specs
