"""Errors of the reference engines, and where in the user's code they come from.

Every error that a student can cause names the op and the file:line of the user code
that created it, because a traceback ending deep inside an engine teaches nothing.
"""
from __future__ import annotations

import linecache
import os
import sys
from dataclasses import dataclass
from types import FrameType
from typing import Any

_ENGINE_DIR = os.path.dirname(os.path.abspath(__file__))


@dataclass(frozen=True)
class SourceLocation:
    """Where a node or tensor was created: the first frame outside grader/engines."""

    filename: str
    lineno: int
    code: str = ""

    def __str__(self) -> str:
        return f"{self.filename}:{self.lineno}"

    def describe(self) -> str:
        """``file:line (`code`)`` for error messages."""
        return f"{self}" + (f" (`{self.code}`)" if self.code else "")

    def to_json(self) -> dict[str, Any]:
        return {"file": self.filename, "line": self.lineno, "code": self.code}


_UNKNOWN = SourceLocation("<unknown>", 0)
# the demo plays the part of a user's script, so its lines are the ones to point at
_USER_CODE_IN_PACKAGE = {"demo.py"}


def user_location() -> SourceLocation:
    """The innermost stack frame that does not belong to the engines package."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        path = os.path.abspath(filename)
        inside = path.startswith(_ENGINE_DIR + os.sep) and os.path.basename(path) not in _USER_CODE_IN_PACKAGE
        if not inside and not filename.startswith("<frozen"):
            if os.path.basename(filename) != "contextlib.py":
                line = linecache.getline(filename, frame.f_lineno).strip()
                return SourceLocation(filename, frame.f_lineno, line)
        frame = frame.f_back
    return _UNKNOWN


class EngineError(Exception):
    """Base class of every error the engines raise on purpose."""


class GraphError(EngineError):
    """A static graph is malformed or used the wrong way."""


class ShapeError(GraphError, ValueError):
    """Operand shapes or dtypes do not fit an op."""


class CycleError(GraphError):
    """The graph has a cycle, so no execution order exists."""


class MissingInputError(GraphError):
    """An op refers to a node that does not exist, or a placeholder was not fed."""


class GraphFrozenError(GraphError):
    """An op was added to a graph after it was compiled."""


class NoValueError(GraphError, TypeError):
    """A symbolic node was asked for a concrete value (``bool``, ``float``, ``item``)."""


class TracerError(NoValueError):
    """Traced code took a branch that depends on a value the tracer does not know."""


class FreedGraphError(EngineError, RuntimeError):
    """backward() went through a part of the tape whose saved values were already freed."""


class GradientError(EngineError, RuntimeError):
    """backward() or gradients() cannot run as asked (non-scalar output, no grad, ...)."""
