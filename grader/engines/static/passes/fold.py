"""Constant folding and algebraic simplification.

Folding computes, once at compile time, every op whose inputs are all constants (a
gradient graph is full of them: the seed gradient of ones, 1 - y, 1/N). Simplification
removes ops that change nothing: x * 1, x + 0, reshapes to the same shape, -(-x), ...
"""
from __future__ import annotations

import numpy as np

from ...ops import get_op
from ..ir import IRNode, Program


def fold_constants(program: Program) -> Program:
    result = program.copy()
    by_id = result.by_id()
    folded = 0
    for node in result.nodes:
        if node.is_source or not node.inputs:
            continue
        args = [by_id[i] for i in node.inputs]
        # a broadcast of a small constant stays a cheap view: folding would materialise it
        grows = node.nbytes > max(a.nbytes for a in args) and node.nbytes > 32768
        if all(a.op == "constant" for a in args) and not grows:
            value = np.asarray(get_op(node.op).forward(*[a.value for a in args], **node.attrs))
            value = np.array(value, dtype=node.dtype, order="C")  # ascontiguousarray would make 0-d into 1-d
            value.setflags(write=False)
            node.op, node.inputs, node.attrs, node.value = "constant", [], {}, value
            folded += 1
    result.notes.append(f"computed {folded} op(s) whose inputs are all constants at compile time")
    return result


def _is_all(node: IRNode, number: float) -> bool:
    return node.op == "constant" and node.value is not None and node.value.size <= 65536 \
        and bool(np.all(node.value == number))


def simplify(program: Program) -> Program:
    result = program.copy()
    by_id = result.by_id()
    replaced = 0

    def same_type(a: IRNode, b: IRNode) -> bool:
        return a.shape == b.shape and np.dtype(a.dtype) == np.dtype(b.dtype)

    for node in result.nodes:
        if node.is_source:
            continue
        args = [by_id[i] for i in node.inputs]
        keep: IRNode | None = None
        if node.op in ("add",) and len(args) == 2:
            if _is_all(args[1], 0) and same_type(args[0], node):
                keep = args[0]
            elif _is_all(args[0], 0) and same_type(args[1], node):
                keep = args[1]
        elif node.op == "sub" and _is_all(args[1], 0) and same_type(args[0], node):
            keep = args[0]
        elif node.op == "mul":
            if _is_all(args[1], 1) and same_type(args[0], node):
                keep = args[0]
            elif _is_all(args[0], 1) and same_type(args[1], node):
                keep = args[1]
        elif node.op == "div" and _is_all(args[1], 1) and same_type(args[0], node):
            keep = args[0]
        elif node.op == "neg" and args[0].op == "neg":
            keep = by_id[args[0].inputs[0]]
        elif node.op in ("reshape", "broadcast_to", "sum_to", "cast") and same_type(args[0], node):
            keep = args[0]
        elif node.op == "transpose" and node.attrs["axes"] == tuple(range(len(node.typed[0]))):
            keep = args[0]
        elif node.op == "reshape" and args[0].op == "reshape":
            node.inputs = [args[0].inputs[0]]  # reshape of a reshape: one reshape is enough
        if keep is not None and keep.id != node.id:
            result.replace_uses(node.id, keep.id)
            replaced += 1
    result.notes.append(
        f"removed {replaced} op(s) that leave their input unchanged (x*1, x+0, same-shape reshape, ...)"
    )
    return result
