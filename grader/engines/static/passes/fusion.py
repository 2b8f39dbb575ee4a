"""Elementwise fusion: chains (and small DAGs) of elementwise ops become one kernel.

A node joins its consumer's kernel when every one of its consumers is in that same
kernel and it is not a requested output, so no value inside a kernel is ever needed
outside it. The fused node keeps the id of the kernel's last op (its root), so the
rest of the program does not change. Code generation then writes the whole chain as one
function of numpy calls with ``out=`` into preallocated buffers: one launch, no temporaries.
"""
from __future__ import annotations

import copy

from ...ops import get_op
from ..ir import IRNode, Program


def fuse_elementwise(program: Program) -> Program:
    result = program.copy()
    consumers = result.consumers()
    outputs = set(result.outputs)
    group_of: dict[int, int] = {}   # node id -> root id of its kernel
    for node in reversed(result.nodes):
        if node.is_source or not get_op(node.op).elementwise:
            continue
        users = consumers.get(node.id, [])
        roots = {group_of.get(u) for u in users}
        root = roots.pop() if len(roots) == 1 else None
        if node.id not in outputs and users and root is not None:
            group_of[node.id] = root
        else:
            group_of[node.id] = node.id
    members: dict[int, list[IRNode]] = {}
    for node in result.nodes:
        if node.id in group_of:
            members.setdefault(group_of[node.id], []).append(node)
    fused_nodes: list[IRNode] = []
    kernels = 0
    absorbed = 0
    for node in result.nodes:
        root = group_of.get(node.id)
        if root is None or len(members[root]) == 1:
            fused_nodes.append(node)
            continue
        if root != node.id:
            continue  # emitted with its root, which comes later in the order
        body = [copy.copy(m) for m in members[root]]
        inside = {m.id for m in body}
        external: list[int] = []
        for m in body:
            for i in m.inputs:
                if i not in inside and i not in external:
                    external.append(i)
        kernels += 1
        absorbed += len(body)
        fused_nodes.append(IRNode(
            node.id, "fused", external, {"kernel": f"fused_{kernels - 1}"}, node.shape, node.dtype,
            node.name, node.source, body=body))
    result.nodes = fused_nodes
    result.notes.append(f"fused {absorbed} elementwise op(s) into {kernels} kernel(s)")
    return result
