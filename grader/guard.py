"""The run-time half of an exercise's rules: the student's process never holds a banned module.

    start(rules, frameworks)     # first thing in a fresh interpreter, before anything is imported

A module the process holds is reachable whatever the import hooks say: as a global of any
module that imported it (``wire.np``), or among the live objects (``gc.get_objects()``). So
the student's worker of an exercise with rules is not a fork of the preloaded zygote: it is a
fresh interpreter (grader/harness/programs.py) whose first act is this, before the harness or
a framework is imported:

1. an audit hook (``sys.addaudithook``, which cannot be removed) refuses every import of a
   banned top-level module (``numpy`` where the exercise bans it), whoever asks for it: it is
   never loaded at all;
2. the frameworks the exercise uses are imported (``torch``). A library that imports a banned
   submodule at its own import time gets it (``import torch`` imports ``torch.func`` and
   ``torch.autograd.functional``);
3. ``seal()`` drops those submodules: out of ``sys.modules``, off their parent package, no
   reference kept, collected. From then on the hook refuses every import of a banned module,
   a library's or the harness's as much as the student's (nothing imports on the student's
   behalf), and every open of a banned module's files (what loading one from its file does,
   also where ``importlib`` skips the ``import`` event).

What a library still holds of a dropped submodule stays reachable: torch's own flex attention
keeps classes of ``torch.utils.checkpoint``, whose functions' globals are that module's
namespace (tests/security/test_redteam_round3.py keeps that attack). The static check
(grader/harness/rules.py) catches what the source names outright; this, what it builds at
run time.

Standard library and grader.contract only: it runs before the harness package (which imports
numpy) is imported.
"""
from __future__ import annotations

import gc
import importlib
import importlib.machinery
import os
import sys
from collections.abc import Sequence
from typing import Any

from grader.contract import RULE_VIOLATION, Rule


class RuleViolation(ModuleNotFoundError):
    """An import the exercise's rules refuse; str() is ``"<rule number>:<module>: ..."``."""


RuleViolation.__name__ = RULE_VIOLATION
RuleViolation.__qualname__ = RULE_VIOLATION

_SEALED: list[bool] = []  # set once seal() has dropped what the frameworks imported
_INSTALLED: list[bool] = []


def banned_modules(rules: Sequence[Rule]) -> list[tuple[int, str]]:
    """(rule number, module) for every module ``rules`` ban."""
    return [(number, module) for number, rule in enumerate(rules) for module in rule.get("modules", [])]


def is_banned(name: str, rules: Sequence[Rule]) -> bool:
    return any(name == module or name.startswith(module + ".") for _, module in banned_modules(rules))


def start(rules: Sequence[Rule], frameworks: Sequence[str]) -> None:
    """Install the rules, import the ``frameworks`` the exercise uses (but a banned one), seal."""
    install(rules)
    for framework in frameworks:
        if not is_banned(framework, rules):
            importlib.import_module(framework)
    seal(rules)


def install(rules: Sequence[Rule]) -> None:
    """Refuse, from now on in this process, every import of a banned top-level module, and
    of any banned module once sealed."""
    banned = banned_modules(rules)
    if not banned or _INSTALLED:
        return
    _INSTALLED.append(True)
    owners = [(path, number, module) for number, module in banned for path in _files_of(module)]

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "import":
            name = args[0]
            if not isinstance(name, str):
                return
            for number, module in banned:
                if (name == module or name.startswith(module + ".")) and (_SEALED or "." not in module):
                    raise RuleViolation(f"{number}:{module}: not allowed in this exercise")
        elif event == "open" and _SEALED and owners and isinstance(args[0], str | bytes | os.PathLike):
            path = os.fsdecode(args[0])
            for candidate in (path, os.path.realpath(path)):  # a link of the student's own leads here too
                owner = next((o for o in owners if candidate.startswith(o[0])), None)
                if owner is not None:
                    raise RuleViolation(f"{owner[1]}:{owner[2]}: not allowed in this exercise")

    sys.addaudithook(hook)


def seal(rules: Sequence[Rule]) -> None:
    """Drop every banned module the frameworks imported, keeping no reference to any."""
    for _, module in banned_modules(rules):
        for name in [n for n in sys.modules if n == module or n.startswith(module + ".")]:
            dropped = sys.modules.pop(name)
            parent, _, child = name.rpartition(".")
            if parent in sys.modules and vars(sys.modules[parent]).get(child) is dropped:
                delattr(sys.modules[parent], child)
            del dropped
    _SEALED.append(True)
    gc.collect()


def _files_of(module: str) -> tuple[str, ...]:
    """Path prefixes of what loading ``module`` opens: its package folder, or its source and
    its compiled forms; found without importing anything."""
    top, *rest = module.split(".")
    try:
        spec = importlib.machinery.PathFinder.find_spec(top)
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        return ()
    if spec.submodule_search_locations:
        base = os.path.join(list(spec.submodule_search_locations)[0], *rest)
    elif spec.origin and not rest:
        base = os.path.splitext(spec.origin)[0]
    else:
        return ()
    found = []
    for folder in {base, os.path.realpath(base)}:
        found += [os.path.join(folder, ""), folder + ".",
                  os.path.join(os.path.dirname(folder), "__pycache__", os.path.basename(folder) + ".")]
    return tuple(found)
