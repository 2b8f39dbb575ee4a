"""Common-subexpression elimination: the same op on the same inputs is computed once."""
from __future__ import annotations

from typing import Any

from ..ir import Program


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


def eliminate_common_subexpressions(program: Program) -> Program:
    result = program.copy()
    seen: dict[Any, int] = {}
    alias: dict[int, int] = {}
    merged = 0
    kept = []
    for node in result.nodes:
        node.inputs = [alias.get(i, i) for i in node.inputs]
        if node.op in ("placeholder", "variable"):
            kept.append(node)
            continue
        key: tuple[Any, ...]
        if node.op == "constant" and node.value is not None:
            if node.value.size > 4096:
                kept.append(node)
                continue
            key = ("constant", node.value.dtype.str, node.value.shape, node.value.tobytes())
        else:
            key = (node.op, tuple(node.inputs), _freeze(node.attrs))
        if key in seen:
            alias[node.id] = seen[key]
            merged += 1
            continue
        seen[key] = node.id
        kept.append(node)
    result.nodes = kept
    result.outputs = [alias.get(o, o) for o in result.outputs]
    result.notes.append(f"merged {merged} node(s) that repeat an earlier computation")
    return result
