"""The static half of an exercise's rules: does the student's source name an API it may not use?

    found = violations(source, manifest["rules"])    # [] when the source keeps every rule

Read from the syntax tree before the student's module runs (the audit hook of guard.py is
the other half, at run time). A name is followed through what the source does with it:
``import torch.utils.checkpoint as c``, ``from numpy import broadcast_shapes as b``,
``u = torch.utils; u.checkpoint``, ``getattr(np, "broadcast_shapes")``, ``setattr(torch, "compile", f)``,
``__import__("torch.utils.checkpoint")``, ``importlib.import_module(...)``, a star import
from a module that holds a banned name, and any string (but a docstring) that spells a
banned name. What the source computes at run time (a name built from pieces) is the
audit hook's to refuse. Standard library only: it ships in the bundle and the host uses it
too (to prove that the reference solution keeps its own rules).
"""
from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterable, Sequence

from grader.contract import RULE_VIOLATION, Rule
from grader.harness.messages import Message

# Calls that import the module their first argument names.
_IMPORTERS = {"__import__", "builtins.__import__", "importlib.import_module", "importlib.__import__"}
# Calls that reach (or replace) ``obj.name`` by a name in a string: setattr(torch, "compile", fake).
_ATTRIBUTE_CALLS = {"setattr", "delattr", "hasattr", "builtins.setattr", "builtins.delattr"}


@dataclasses.dataclass(frozen=True)
class Violation:
    """The source uses ``api`` (a name of rule number ``rule``) at ``line``."""

    rule: int
    api: str
    line: int


def banned_name(dotted: str, rules: Sequence[Rule], *, called: bool = False) -> tuple[int, str] | None:
    """(rule number, the banned name) when ``dotted`` is a banned module, attribute, or
    (``called``) a banned call, or lies inside one; else None."""
    for number, rule in enumerate(rules):
        for name in (*rule["modules"], *rule["attributes"]):
            if dotted == name or dotted.startswith(name + "."):
                return number, name
        if called:
            builtin = dotted.removeprefix("builtins.").removeprefix("__builtins__.")
            for name in rule["calls"]:
                if name in (dotted, builtin):
                    return number, name
    return None


def violations(source: str, rules: Sequence[Rule]) -> list[Violation]:
    """Every place ``source`` uses what ``rules`` refuse, in line order (one per line and API).

    A source that does not parse keeps every rule here: its syntax error is reported as such."""
    if not rules:
        return []
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    return _Reader(tree, rules).found()


class _Reader:
    def __init__(self, tree: ast.Module, rules: Sequence[Rule]):
        self.tree = tree
        self.rules = rules
        self.aliases: dict[str, str] = {}  # a name in the source -> the dotted name it stands for
        self.hits: dict[tuple[int, str], Violation] = {}
        self.docstrings = {id(node.value) for node in ast.walk(tree)
                           if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}

    def found(self) -> list[Violation]:
        # Aliases first (two rounds: an alias of an alias), then every use.
        for _ in range(2):
            for node in ast.walk(self.tree):
                self._bind(node)
        for node in ast.walk(self.tree):
            self._check(node)
        return sorted(self.hits.values(), key=lambda v: (v.line, v.api))

    # -- what names stand for --

    def _bind(self, node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    self.aliases[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    self.aliases[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if alias.name != "*":
                    self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.NamedExpr):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = self.dotted(node.value) if node.value is not None else None
            for target in targets:
                if isinstance(target, ast.Name) and value and value != target.id:
                    self.aliases[target.id] = value

    def dotted(self, node: ast.AST) -> str | None:
        """The dotted name an expression stands for (``np.linalg`` -> ``numpy.linalg``), if any."""
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = self.dotted(node.value)
            return f"{base}.{node.attr}" if base else None
        if isinstance(node, ast.Call):
            function = self.dotted(node.func)
            name = _constant(node.args[0]) if node.args else None
            if function == "getattr" and len(node.args) >= 2:
                base, attribute = self.dotted(node.args[0]), _constant(node.args[1])
                return f"{base}.{attribute}" if base and attribute else None
            if function in _IMPORTERS and name:
                module = self._imported(function, node) or name
                # __import__("a.b") gives back the package "a" unless it is asked for names.
                wants_names = len(node.args) >= 4 or any(k.arg == "fromlist" for k in node.keywords)
                return module.split(".")[0] if function.endswith("__import__") and not wants_names else module
        return None

    def _imported(self, function: str, call: ast.Call) -> str | None:
        """The absolute module a call of an importer names (relative names resolved by its package)."""
        name = _constant(call.args[0]) if call.args else None
        if not name:
            return None
        if name.startswith(".") and function == "importlib.import_module" and len(call.args) > 1:
            package = _constant(call.args[1])
            if package:
                return f"{package}.{name.lstrip('.')}"
        return name

    # -- uses --

    def _check(self, node: ast.AST) -> None:
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Import):
            for alias in node.names:
                self._refuse(alias.name, line)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            self._refuse(node.module, line)
            for alias in node.names:
                if alias.name == "*":
                    self._star(node.module, line)
                else:
                    self._refuse(f"{node.module}.{alias.name}", line)
        elif isinstance(node, ast.Attribute):
            self._refuse(self.dotted(node), line)
        elif isinstance(node, ast.Call):
            function = self.dotted(node.func)
            self._refuse(function, line, called=True)
            if function in _IMPORTERS:
                self._refuse(self._imported(function, node), line)
            if function in _ATTRIBUTE_CALLS and len(node.args) >= 2:
                base, attribute = self.dotted(node.args[0]), _constant(node.args[1])
                self._refuse(f"{base}.{attribute}" if base and attribute else None, line)
            self._refuse(self.dotted(node), line)  # getattr(...) and importers
        elif isinstance(node, ast.Name):
            # A banned name bound by ``from x import y`` (found at the import) or by assignment.
            self._refuse(self.aliases.get(node.id), line, called=False)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in self.docstrings:
            self._refuse(node.value.strip(), line)

    def _star(self, module: str, line: int) -> None:
        for number, rule in enumerate(self.rules):
            for name in (*rule["modules"], *rule["attributes"], *rule["calls"]):
                if name.startswith(module + "."):
                    self._hit(number, name, line)

    def _refuse(self, dotted: str | None, line: int, *, called: bool = False) -> None:
        if not dotted:
            return
        found = banned_name(dotted, self.rules, called=called)
        if found is not None:
            self._hit(*found, line)

    def _hit(self, rule: int, api: str, line: int) -> None:
        self.hits.setdefault((line, api), Violation(rule=rule, api=api, line=line))


def _constant(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def names_of(rules: Iterable[Rule]) -> set[str]:
    """Every name the rules refuse (what a message may name)."""
    return {name for rule in rules for name in (*rule["modules"], *rule["attributes"], *rule["calls"])}


def refusal(source: str, rules: Sequence[Rule]) -> Message | None:
    """The message that refuses ``source`` before it runs (its first violation), or None."""
    found = violations(source, rules)
    if not found:
        return None
    first = found[0]
    return Message("rules.refused", api=first.api, line=first.line, reason=dict(rules[first.rule]["reason"]))


def refused_import(type_name: str, message: str, rules: Sequence[Rule]) -> Message | None:
    """The message for an import the student's process refused (guard.py), or None when the
    error is not one. The error comes from the student's process: only a module the rules
    ban is ever named, and the reason is the exercise's, never the process's words."""
    if type_name != RULE_VIOLATION:
        return None
    number, _, rest = message.partition(":")
    module = rest.split(":")[0]
    if not number.isdigit() or int(number) >= len(rules) or module not in rules[int(number)]["modules"]:
        return None
    return Message("rules.refused_import", api=module, reason=dict(rules[int(number)]["reason"]))
