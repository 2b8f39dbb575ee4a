"""Pass 1: resolve inputs and order the graph topologically, refusing cycles and missing inputs."""
from __future__ import annotations

from collections.abc import Sequence

from ...errors import CycleError, MissingInputError
from ..ir import IRNode, Program, SymbolicGraph, SymbolicNode


def order_graph(graph: SymbolicGraph, outputs: Sequence[SymbolicNode]) -> Program:
    """Every node of `graph` in an order where inputs come first (dead code is removed later)."""
    by_name = {n.name: n for n in graph.nodes}

    def resolve(node: SymbolicNode, ref: SymbolicNode | str) -> SymbolicNode:
        if not isinstance(ref, str):
            return ref
        if ref not in by_name:
            raise MissingInputError(
                f"'{node.name}' ({node.op}, created at {node.source.describe()}) takes an input named "
                f"'{ref}', but the graph has no node of that name. Define '{ref}' before compile(), "
                f"or fix the name.")
        return by_name[ref]

    inputs = {n.id: [resolve(n, ref) for ref in n.inputs] for n in graph.nodes}
    # iterative depth-first search with three colours: grey nodes are on the current path,
    # so meeting a grey node again means the path closed into a cycle
    WHITE, GREY, BLACK = 0, 1, 2
    colour = {n.id: WHITE for n in graph.nodes}
    order: list[SymbolicNode] = []
    roots = list(outputs) + [n for n in graph.nodes]
    for root in roots:
        if colour[root.id] != WHITE:
            continue
        colour[root.id] = GREY
        stack: list[tuple[SymbolicNode, int]] = [(root, 0)]
        while stack:
            node, k = stack[-1]
            if k < len(inputs[node.id]):
                stack[-1] = (node, k + 1)
                child = inputs[node.id][k]
                if colour[child.id] == GREY:
                    path = [n for n, _ in stack]
                    cycle = path[path.index(child):] + [child]
                    raise CycleError(
                        "the graph has a cycle, so no op can run first: "
                        + " -> ".join(f"{n.name} ({n.source})" for n in reversed(cycle))
                        + ". A static graph must be acyclic; use a loop in Python to unroll repeated steps.")
                if colour[child.id] == WHITE:
                    colour[child.id] = GREY
                    stack.append((child, 0))
            else:
                stack.pop()
                colour[node.id] = BLACK
                order.append(node)
    nodes = []
    for n in order:
        value = graph.constants.get(n.id) if n.op == "constant" else None
        nodes.append(IRNode(n.id, n.op, [i.id for i in inputs[n.id]], dict(n.attrs), n.shape, n.dtype,
                            n.name, n.source, value=value))
    program = Program(nodes, [o.id for o in outputs])
    program.notes.append(f"{len(nodes)} nodes in execution order; no cycle, every input defined")
    return program
