"""Shape and dtype inference over the whole program (nodes built by name get their types here)."""
from __future__ import annotations

from ...errors import ShapeError
from ...ops import OpRuleError, get_op
from ..ir import Program


def infer_shapes(program: Program) -> Program:
    result = program.copy()
    by_id = result.by_id()
    for node in result.nodes:
        if node.is_source:
            continue
        op = get_op(node.op)
        inputs = [by_id[i] for i in node.inputs]
        try:
            shapes = [i.typed[0] for i in inputs]
            node.attrs = op.canonical_attrs(node.attrs, shapes)
            shape, dtype = op.infer(shapes, [i.typed[1] for i in inputs], node.attrs)
        except OpRuleError as exc:
            raise ShapeError(
                f"{node.op} '{node.name}' created at {node.source.describe()}: {exc} "
                f"(inputs: {', '.join(f'{i.name} {i.type_str()}' for i in inputs)})") from None
        node.shape, node.dtype = tuple(shape), dtype
    result.notes.append("every node has a shape and a dtype")
    return result
