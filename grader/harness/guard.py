"""The run-time half of an exercise's rules: the student's process refuses to import a banned module.

    install(manifest["rules"])     # in the student's worker, before the student's module loads

An audit hook (``sys.addaudithook``) cannot be removed once added, and Python raises the
``import`` event for every module it has to find, whatever asked for it: ``import``,
``__import__``, ``importlib``, ``exec`` of a string. A module the zygote preloaded is not
found again, so install() first takes every banned module out of ``sys.modules`` and off
its parent package: the next import of it has to be found, and the hook sees it.

The hook refuses an import asked for by the student's code and lets the libraries import
what they need for themselves (torch importing its own parts): it looks at the frame that
asked, past the import machinery and the standard library, and lets an import through only
when that frame's code is a library file. A student cannot borrow a library's file name for
its own code: compiling a source under a library's file name is refused to the student too.
The static check (rules.py) catches what the source names outright; this catches what it
builds at run time.
"""
from __future__ import annotations

import importlib.machinery
import os
import site
import sys
import sysconfig
import types
from collections.abc import Sequence
from typing import Any

from grader.contract import RULE_VIOLATION, Rule


class RuleViolation(ImportError):
    """An import the exercise's rules refuse; str() is ``"<rule number>:<module>: ..."``."""


RuleViolation.__name__ = RULE_VIOLATION
RuleViolation.__qualname__ = RULE_VIOLATION

_INSTALLED: list[bool] = []


def install(rules: Sequence[Rule]) -> None:
    """Refuse, from now on in this process, the student's imports of every module ``rules`` ban."""
    banned = [(number, module) for number, rule in enumerate(rules) for module in rule["modules"]]
    if not banned or _INSTALLED:
        return
    _INSTALLED.append(True)
    hidden: dict[str, types.ModuleType] = {}
    for _, module in banned:
        for name in [n for n in sys.modules if n == module or n.startswith(module + ".")]:
            hidden[name] = sys.modules.pop(name)
        parent, _, child = module.rpartition(".")
        if parent in sys.modules and child in vars(sys.modules[parent]):
            delattr(sys.modules[parent], child)
    # Every way to load a module from its file opens that file (io.open_code raises "open"),
    # also where importlib.import_module skips the "import" event: refused the student too.
    owners = [(path, number, module) for number, module in banned for path in _files_of(module, hidden)]
    files = tuple(path for path, _, _ in owners)
    libraries = _library_folders()
    standard = _standard_folders()
    here = os.path.abspath(__file__)

    def asked_by_library() -> bool:
        frame: types.FrameType | None = sys._getframe(2)
        while frame is not None:
            filename = frame.f_code.co_filename
            if filename.startswith("<frozen ") or filename == here or (
                    filename.startswith(standard) and not filename.startswith(libraries)):
                frame = frame.f_back  # the import machinery, the standard library: look further
                continue
            return filename.startswith(libraries)
        return False

    def restore(name: str) -> None:
        """Give a library back the module it imports, as it was before install()."""
        for hidden_name in sorted(n for n in hidden if n == name or name.startswith(n + ".")
                                  or n.startswith(name + ".")):
            module = hidden.pop(hidden_name)
            sys.modules.setdefault(hidden_name, module)
            parent, _, child = hidden_name.rpartition(".")
            if parent in sys.modules:
                setattr(sys.modules[parent], child, sys.modules[hidden_name])

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "import":
            name = args[0]
            if not isinstance(name, str):
                return
            for number, module in banned:
                if name == module or name.startswith(module + "."):
                    if asked_by_library():
                        restore(name)
                        return
                    raise RuleViolation(f"{number}:{module}: not allowed in this exercise")
        elif event == "open" and files and isinstance(args[0], str | bytes | os.PathLike):
            path = os.fsdecode(args[0])
            for candidate in (path, os.path.realpath(path)):  # a link of the student's own leads here too
                owner = next((o for o in owners if candidate.startswith(o[0])), None)
                if owner is not None and not asked_by_library():
                    raise RuleViolation(f"{owner[1]}:{owner[2]}: not allowed in this exercise")
        elif event == "compile" and len(args) > 1 and isinstance(args[1], str):
            filename = args[1]
            if filename.startswith(libraries + standard) and not asked_by_library():
                raise RuleViolation(f"-1:{filename}: a library's file name for your own code")

    sys.addaudithook(hook)


def _files_of(module: str, hidden: dict[str, types.ModuleType]) -> tuple[str, ...]:
    """Path prefixes of what loading ``module`` opens: its package folder, or its source and
    its compiled forms; found without importing anything."""
    loaded = hidden.get(module) or sys.modules.get(module)
    origin = getattr(loaded, "__file__", None) if loaded is not None else None
    if isinstance(origin, str):
        base = os.path.dirname(origin) if os.path.basename(origin).startswith("__init__.") else origin[:-3]
    else:
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


def _library_folders() -> tuple[str, ...]:
    """Where library code lives: the installed packages, and the harness this module ships in."""
    folders = {sysconfig.get_paths()[key] for key in ("purelib", "platlib")}
    folders.update(site.getsitepackages())
    folders.add(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    return tuple(os.path.join(os.path.realpath(f), "") for f in folders) + tuple(
        os.path.join(f, "") for f in folders)


def _standard_folders() -> tuple[str, ...]:
    folders = {sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib")}
    return tuple(os.path.join(os.path.realpath(f), "") for f in folders) + tuple(
        os.path.join(f, "") for f in folders)
