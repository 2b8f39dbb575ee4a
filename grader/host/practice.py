"""A practice run: the exercise's visible correctness checks only, for quick feedback.

Hidden checks and performance cases are left unregistered (their decorator lines blanked,
so every line number stays where the author wrote it); the judge then runs what is left
exactly as it runs a submission.
"""
from __future__ import annotations

import ast
import dataclasses

from grader.host.spec import ExerciseSpec


def visible_only(exercise: ExerciseSpec) -> ExerciseSpec:
    """``exercise`` with nothing but its visible @check cases."""
    dropped = {c.name for c in exercise.checks if c.perf or not c.visible}
    lines = exercise.checks_source.split("\n")
    for node in ast.parse(exercise.checks_source, "checks.py").body:
        if isinstance(node, ast.FunctionDef) and node.name in dropped:
            for decorator in node.decorator_list:
                for number in range(decorator.lineno - 1, decorator.end_lineno or decorator.lineno):
                    lines[number] = ""
    return dataclasses.replace(
        exercise,
        checks_source="\n".join(lines),
        checks=[c for c in exercise.checks if c.name not in dropped],
        perf=[],
    )
