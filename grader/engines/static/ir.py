"""The compiler's intermediate representation: a program is a list of nodes in execution order.

Passes take a :class:`Program` and return a new one; the compiler keeps a snapshot after
each pass so that lessons can show (as text, JSON or Graphviz DOT) what every pass did.
"""
from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from ..errors import SourceLocation

SOURCE_KINDS = ("placeholder", "constant", "variable")


class SymbolicNode(Protocol):
    """What the compiler reads of a graph's node (``graph.Node`` is one): the graph compiles
    itself through the compiler, so the compiler knows it by this shape, not by its module."""

    @property
    def graph(self) -> SymbolicGraph: ...
    @property
    def id(self) -> int: ...
    @property
    def op(self) -> str: ...
    @property
    def inputs(self) -> tuple[Any, ...]: ...  # nodes, or names of nodes (resolved when lowered)
    @property
    def attrs(self) -> dict[str, Any]: ...
    @property
    def shape(self) -> tuple[int, ...] | None: ...
    @property
    def dtype(self) -> np.dtype | None: ...
    @property
    def name(self) -> str: ...
    @property
    def source(self) -> SourceLocation: ...


class SymbolicGraph(Protocol):
    """What the compiler reads and marks of a graph (``graph.Graph`` is one)."""

    compiled_at: SourceLocation | None
    variables: dict[int, np.ndarray]  # the current value of each variable, by node id
    constants: dict[int, np.ndarray]

    @property
    def name(self) -> str: ...
    @property
    def nodes(self) -> Sequence[SymbolicNode]: ...
    def node(self, name: str) -> SymbolicNode: ...


@dataclass
class IRNode:
    """One value of the program: a source (placeholder, constant, variable) or an op applied to inputs."""

    id: int
    op: str
    inputs: list[int]
    attrs: dict[str, Any]
    shape: tuple[int, ...] | None
    dtype: np.dtype | None
    name: str
    source: SourceLocation
    value: np.ndarray | None = None      # constants only
    body: list[IRNode] | None = None   # fused kernels: the elementwise ops inside, in order
    buffer: int | None = None            # memory plan: which pooled buffer holds the result

    @property
    def is_source(self) -> bool:
        return self.op in SOURCE_KINDS

    @property
    def nbytes(self) -> int:
        if self.shape is None or self.dtype is None:
            return 0
        return int(np.prod(self.shape, dtype=np.int64)) * np.dtype(self.dtype).itemsize

    @property
    def typed(self) -> tuple[tuple[int, ...], np.dtype]:
        """Shape and dtype, which every node has once shapes are inferred (passes/infer.py)."""
        if self.shape is None or self.dtype is None:
            raise ValueError(f"{self.name}: shape and dtype are not inferred yet")
        return self.shape, self.dtype

    def type_str(self) -> str:
        if self.shape is None:
            return "?"
        return f"{np.dtype(self.dtype).name}[{','.join(map(str, self.shape))}]"


@dataclass
class Program:
    """Nodes in a valid execution order (every node after its inputs), and the requested outputs."""

    nodes: list[IRNode]
    outputs: list[int]
    #: what the last pass did, in a sentence or two (shown in the lessons)
    notes: list[str] = field(default_factory=list)
    #: filled by the memory planner: byte size of each pooled buffer
    buffers: list[int] = field(default_factory=list)

    def copy(self) -> Program:
        return Program([copy.copy(n) for n in self.nodes], list(self.outputs), [], list(self.buffers))

    def by_id(self) -> dict[int, IRNode]:
        return {n.id: n for n in self.nodes}

    def consumers(self) -> dict[int, list[int]]:
        users: dict[int, list[int]] = {n.id: [] for n in self.nodes}
        for n in self.nodes:
            for i in n.inputs:
                users.setdefault(i, []).append(n.id)
        return users

    def replace_uses(self, old: int, new: int) -> None:
        """Make every consumer (and the output list) read `new` instead of `old`."""
        for n in self.nodes:
            if old in n.inputs:
                n.inputs = [new if i == old else i for i in n.inputs]
        self.outputs = [new if o == old else o for o in self.outputs]

    # ---------------------------------------------------------------------- measurements
    @property
    def kernel_count(self) -> int:
        """Kernels one run launches: every computing op; views and sources launch none."""
        return sum(1 for n in self.nodes if not n.is_source and n.op not in _VIEW_OPS)

    @property
    def op_count(self) -> int:
        """Primitive ops one run performs, counting the ops inside fused kernels."""
        return sum(len(n.body) if n.body else 1 for n in self.nodes if not n.is_source)

    @property
    def planned_bytes(self) -> int:
        return sum(self.buffers)

    # ---------------------------------------------------------------------- exports
    def names(self) -> dict[int, str]:
        return {n.id: n.name for n in self.nodes}

    def to_json(self) -> dict[str, Any]:
        names = self.names()
        return {
            "nodes": [_node_json(n, names) for n in self.nodes],
            "outputs": [names.get(o, str(o)) for o in self.outputs],
            "kernel_count": self.kernel_count,
            "op_count": self.op_count,
            "buffers": list(self.buffers),
            "notes": list(self.notes),
        }

    def to_dot(self, title: str = "plan") -> str:
        lines = [f'digraph "{_esc(title)}" {{', "  rankdir=TB;",
                 '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];']
        outputs = set(self.outputs)
        for n in self.nodes:
            color = _DOT_COLORS.get("fused" if n.body else n.op, _DOT_COLORS["op"])
            label = f"{n.name}\\n{n.op} {n.type_str()}"
            if n.body:
                label += "\\n" + " → ".join(b.op for b in n.body)
            if n.buffer is not None:
                label += f"\\nbuffer #{n.buffer}"
            border = ", penwidth=2.5" if n.id in outputs else ""
            lines.append(f'  n{n.id} [label="{_esc(label)}", fillcolor="{color}"{border}];')
        for n in self.nodes:
            for i in n.inputs:
                lines.append(f"  n{i} -> n{n.id};")
        lines.append("}")
        return "\n".join(lines)

    def __str__(self) -> str:
        names = self.names()
        rows = []
        for n in self.nodes:
            mark = "*" if n.id in self.outputs else " "
            if n.is_source:
                what = n.op + (f" {_short_value(n.value)}" if n.value is not None else "")
            else:
                args = ", ".join(names.get(i, f"?{i}") for i in n.inputs)
                what = f"{n.op}({args})"
                if n.body:
                    what += " {" + "; ".join(b.op for b in n.body) + "}"
            where = f"  buf#{n.buffer}" if n.buffer is not None else ""
            rows.append(f"{mark}{n.name:>14} = {what:<44} {n.type_str():<18}{where}  @ {n.source}")
        return "\n".join(rows)


_VIEW_OPS = frozenset({"reshape", "transpose", "broadcast_to"})

_DOT_COLORS = {"placeholder": "#cfe8ff", "constant": "#eeeeee", "variable": "#ffe9b3",
               "fused": "#d7f5d0", "op": "#ffffff", "matmul": "#f7d6e6"}


def _esc(text: str) -> str:
    return text.replace('"', '\\"')


def _short_value(value: np.ndarray) -> str:
    if value.size <= 4:
        return np.array2string(value, separator=",", threshold=4)
    return f"<{value.size} values>"


def jsonable(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, np.dtype):
        return value.name
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


def _node_json(n: IRNode, names: dict[int, str]) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": n.id, "name": n.name, "op": n.op, "inputs": [names.get(i, str(i)) for i in n.inputs],
        "shape": list(n.shape) if n.shape is not None else None,
        "dtype": np.dtype(n.dtype).name if n.dtype is not None else None,
        "attrs": jsonable(n.attrs), "source": n.source.to_json(), "buffer": n.buffer,
    }
    if n.value is not None and n.value.size <= 16:
        data["value"] = jsonable(n.value)
    if n.body:
        body_names = dict(names)
        body_names.update({b.id: b.name for b in n.body})
        data["body"] = [_node_json(b, body_names) for b in n.body]
    return data


def dumps(program_json: dict[str, Any]) -> str:
    return json.dumps(program_json, indent=2)
