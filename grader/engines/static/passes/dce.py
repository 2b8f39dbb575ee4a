"""Dead-code elimination: keep only what the requested outputs need."""
from __future__ import annotations

from ..ir import Program


def eliminate_dead_code(program: Program) -> Program:
    live: set[int] = set(program.outputs)
    for node in reversed(program.nodes):
        if node.id in live:
            live.update(node.inputs)
    result = program.copy()
    result.nodes = [n for n in result.nodes if n.id in live]
    removed = len(program.nodes) - len(result.nodes)
    result.notes.append(f"removed {removed} node(s) that no requested output needs")
    return result
