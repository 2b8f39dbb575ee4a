"""Memory planning: liveness analysis assigns each intermediate a pooled buffer.

Values are computed in program order; a value is live from the op that writes it to the
last op that reads it (reading a view keeps the viewed buffer alive). A buffer whose
value died is handed to the next op that needs one (best fit, grown when none fits), and
an elementwise op may write straight over an input that dies at that op (in place).
Requested outputs get fresh memory on every run, so a caller can keep them. The plan's
peak is the size of the pool: every intermediate of a run lives inside it.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from ...ops import get_op
from ..ir import _VIEW_OPS, IRNode, Program


@dataclass
class _Step:
    node: IRNode
    inputs: list[int]


def _steps(program: Program) -> list[_Step]:
    """The program as the machine runs it: fused kernels opened up into their ops."""
    steps: list[_Step] = []
    for node in program.nodes:
        if node.body:
            steps.extend(_Step(b, b.inputs) for b in node.body)
        else:
            steps.append(_Step(node, node.inputs))
    return steps


def _storage_roots(program: Program, steps: list[_Step]) -> dict[int, int]:
    root: dict[int, int] = {}
    for step in steps:
        n = step.node
        root[n.id] = root.get(n.inputs[0], n.inputs[0]) if n.op in _VIEW_OPS else n.id
    return root


def unplanned_peak_bytes(program: Program) -> int:
    """Peak intermediate bytes with one fresh allocation per value, held until the run ends
    (a fused kernel's inner values are freed when the kernel returns)."""
    outputs = set(program.outputs)
    held = 0
    peak = 0
    for node in program.nodes:
        if node.is_source or node.op in _VIEW_OPS or node.id in outputs:
            continue
        inner = sum(b.nbytes for b in node.body[:-1]) if node.body else 0
        peak = max(peak, held + inner + node.nbytes)
        held += node.nbytes
    return max(peak, held)


def plan_memory(program: Program) -> Program:
    result = program.copy()
    # copy fused bodies too: this pass writes buffer numbers into them
    for node in result.nodes:
        if node.body:
            node.body = [copy.copy(b) for b in node.body]
    steps = _steps(result)
    root = _storage_roots(result, steps)
    outputs = set(result.outputs)
    pinned = {root.get(o, o) for o in outputs}   # a pooled buffer under an output view stays put
    producers = {s.node.id: s.node for s in steps}
    last_use: dict[int, int] = {}
    for index, step in enumerate(steps):
        for i in step.inputs:
            last_use[root.get(i, i)] = index
    capacity: list[int] = []
    free: list[int] = []
    assigned: dict[int, int] = {}
    in_place = 0
    for index, step in enumerate(steps):
        node = step.node
        if node.is_source or node.op in _VIEW_OPS:
            continue
        chosen = None
        if node.id not in outputs:
            op = get_op(node.op)
            if op.elementwise and op.inplace_safe:
                for i in step.inputs:
                    base = root.get(i, i)
                    if (base == i and base in assigned and base not in pinned and last_use.get(base) == index
                            and _same_layout(producers[i], node)):
                        chosen = assigned.pop(base)
                        in_place += 1
                        break
            if chosen is None:
                chosen = _best_fit(free, capacity, node.nbytes)
            assigned[node.id] = chosen
            node.buffer = chosen
        for i in set(step.inputs):
            base = root.get(i, i)
            if base in assigned and base not in pinned and last_use.get(base) == index:
                free.append(assigned.pop(base))
        if node.id in assigned and node.id not in last_use:
            free.append(assigned.pop(node.id))  # computed but never read: its buffer is free at once
    for node in result.nodes:
        if node.body:
            node.buffer = node.body[-1].buffer
    result.buffers = capacity
    unplanned = unplanned_peak_bytes(program)
    result.notes.append(
        f"{len(capacity)} pooled buffer(s), {sum(capacity)} bytes at peak (unplanned: {unplanned} bytes); "
        f"{in_place} op(s) write in place over an input that dies there")
    return result


def _same_layout(producer: IRNode, node: IRNode) -> bool:
    return producer.shape == node.shape and np.dtype(producer.dtype) == np.dtype(node.dtype)


def _best_fit(free: list[int], capacity: list[int], need: int) -> int:
    fitting = [b for b in free if capacity[b] >= need]
    if fitting:
        # smallest that fits; among equals the most recently freed, whose bytes are still in cache
        order = {b: k for k, b in enumerate(free)}
        chosen = min(fitting, key=lambda b: (capacity[b], -order[b]))
    elif free:
        chosen = max(free, key=lambda b: capacity[b])
        capacity[chosen] = need    # grow the largest free buffer rather than add another
    else:
        capacity.append(need)
        return len(capacity) - 1
    free.remove(chosen)
    return chosen
