"""Building a static graph (define-then-run, the TF1 way).

Placeholders, constants, variables and ops only *describe* a computation: no value exists
while the graph is built, but every node already knows its shape and dtype, so a
mismatch is reported at the line that wrote it. ``compile()`` freezes the graph and
returns an executable that can run many times with different feeds.
"""
from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from .. import events
from ..errors import (
    GradientError,
    GraphError,
    GraphFrozenError,
    NoValueError,
    ShapeError,
    SourceLocation,
    TracerError,
    user_location,
)
from ..functional import TensorLike
from ..ops import OpDef, OpRuleError, get_op, is_scalar, partner_dtype, scalar_dtype
from .compile import Executable, compile_graph

_graph_ids = itertools.count(1)


class Node(TensorLike):
    """A symbolic value in a static graph: it has a shape and a dtype, but no value yet."""

    __slots__ = ("graph", "id", "op", "inputs", "attrs", "shape", "dtype", "name", "source")
    _priority = 2  # symbolic wins: an eager tensor meeting a node becomes a graph constant

    def __init__(self, graph: Graph, node_id: int, op: str, inputs: tuple[Any, ...], attrs: dict[str, Any],
                 shape: tuple[int, ...] | None, dtype: np.dtype | None, name: str, source: SourceLocation) -> None:
        self.graph = graph
        self.id = node_id
        self.op = op
        self.inputs = inputs      # Nodes, or names of nodes still to be defined (resolved at compile)
        self.attrs = attrs
        self.shape = shape
        self.dtype = dtype
        self.name = name
        self.source = source

    @classmethod
    def _apply(cls, op: OpDef, args: Sequence[Any], attrs: dict[str, Any]) -> Node:
        graph = next(a.graph for a in args if isinstance(a, Node))
        return graph.op(op.name, args, **attrs)

    @property
    def ndim(self) -> int:
        return len(self.shape) if self.shape is not None else -1

    def _no_value(self, what: str) -> NoValueError:
        where = user_location()
        if self.graph.tracing:
            return TracerError(
                f"data-dependent control flow at {where.describe()}: {what} needs the value of "
                f"'{self.name}' ({self.op}), but the tracer only knows its shape {self.shape} and dtype "
                f"{self.dtype}. Use where(cond, a, b) instead of if/else on a value, or run this "
                f"function eagerly (the dynamic engine) instead of tracing it.")
        return NoValueError(
            f"{what} at {where.describe()} needs the value of '{self.name}', but a static graph node has no "
            f"value until the compiled graph runs: compile() it and run(feeds) to get numbers.")

    def __bool__(self) -> bool:
        raise self._no_value("bool() (an if, while, and/or on a value)")

    def __float__(self) -> float:
        raise self._no_value("float()")

    def __int__(self) -> int:
        raise self._no_value("int()")

    def __index__(self) -> int:
        raise self._no_value("using a value as an index")

    def item(self) -> Any:
        raise self._no_value("item()")

    def numpy(self) -> np.ndarray:
        raise self._no_value("numpy()")

    def __array__(self, dtype: Any = None, copy: Any = None) -> None:
        raise self._no_value("converting to a numpy array")

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError(f"'{self.name}' is a scalar and has no len()")
        return self.shape[0]

    def __iter__(self) -> None:
        raise self._no_value("iterating over a node")

    def __repr__(self) -> str:
        shape = "?" if self.shape is None else list(self.shape)
        return f"<Node {self.name}: {self.op} {self.dtype} {shape}>"


class Graph:
    """A static computation graph. Build it, then ``compile(outputs)``; once compiled, it is frozen."""

    def __init__(self, name: str | None = None) -> None:
        self.id = next(_graph_ids)
        self.name = name or f"graph{self.id}"
        self.nodes: list[Node] = []
        self._by_name: dict[str, Node] = {}
        self._counts: dict[str, int] = {}
        self.variables: dict[int, np.ndarray] = {}   # the current value of each variable, by node id
        self.constants: dict[int, np.ndarray] = {}
        self.compiled_at: SourceLocation | None = None
        self.tracing = False

    # -------------------------------------------------------------------------- context
    def __enter__(self) -> Graph:
        _graph_stack.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _graph_stack.remove(self)

    # -------------------------------------------------------------------------- building
    def placeholder(self, shape: Iterable[int], dtype: Any = "float32", name: str | None = None) -> Node:
        """An input whose value is fed at run time."""
        shape = tuple(int(s) for s in shape)
        return self._add("placeholder", (), {}, shape, np.dtype(dtype), name)

    def constant(self, value: Any, dtype: Any = None, name: str | None = None) -> Node:
        """A value fixed at build time (the constant-folding pass may compute with it)."""
        array = np.array(value, dtype=dtype)
        array.setflags(write=False)
        node = self._add("constant", (), {}, array.shape, array.dtype, name, value=array)
        self.constants[node.id] = array
        return node

    def variable(self, value: Any, dtype: Any = None, name: str | None = None) -> Node:
        """State that lives in the graph between runs (weights); change it with ``assign``."""
        array = np.array(value, dtype=dtype)
        node = self._add("variable", (), {}, array.shape, array.dtype, name)
        self.variables[node.id] = array
        return node

    def assign(self, variable: Node, value: Any) -> None:
        """Give a variable a new value; compiled executables see it on their next run."""
        if variable.op != "variable":
            raise GraphError(f"assign() needs a variable, '{variable.name}' is a {variable.op}")
        array = np.asarray(value, dtype=variable.dtype)
        if array.shape != variable.shape:
            raise ShapeError(f"variable '{variable.name}' has shape {variable.shape}, the new value {array.shape}")
        self.variables[variable.id][...] = array

    def value_of(self, node: Node) -> np.ndarray:
        """The current value of a variable or constant."""
        if node.op == "variable":
            return self.variables[node.id]
        if node.op == "constant":
            return self.constants[node.id]
        raise node._no_value("value_of()")

    def op(self, op_name: str, inputs: Sequence[Any], name: str | None = None, **attrs: Any) -> Node:
        """Add op `op_name` on `inputs` (nodes, numbers, arrays, or names of nodes defined later)."""
        op = get_op(op_name)
        if len(inputs) != op.arity:
            raise GraphError(f"{op.name} takes {op.arity} input(s), got {len(inputs)} at {user_location()}")
        nodes = self._lift(op, inputs)
        shape = dtype = None
        if all(isinstance(n, Node) and n.shape is not None for n in nodes):
            shapes, dtypes = [n.shape for n in nodes], [n.dtype for n in nodes]
            try:
                attrs = op.canonical_attrs(attrs, shapes)
                shape, dtype = op.infer(shapes, dtypes, attrs)
            except OpRuleError as exc:
                raise ShapeError(
                    f"{op.name} at {user_location().describe()}: {exc} "
                    f"(inputs: {', '.join(f'{n.name} {n.dtype}{list(n.shape)}' for n in nodes)})") from None
        return self._add(op.name, tuple(nodes), attrs, shape, dtype, name)

    def _lift(self, op: OpDef, inputs: Sequence[Any]) -> list[Any]:
        """Turn numbers, arrays and eager tensors into constants of this graph."""
        known = [x.dtype for x in inputs if isinstance(x, Node) and x.dtype is not None]
        known += [np.asarray(x).dtype for x in inputs
                  if not isinstance(x, (Node, str)) and not is_scalar(x) and not isinstance(x, TensorLike)]
        partner = partner_dtype(known)
        lifted: list[Any] = []
        for x in inputs:
            if isinstance(x, Node):
                if x.graph is not self:
                    raise GraphError(f"{op.name} at {user_location()} mixes nodes of graphs "
                                     f"'{self.name}' and '{x.graph.name}'; build everything in one graph")
                lifted.append(x)
            elif isinstance(x, str):
                named = self._by_name.get(x)
                lifted.append(x if named is None else named)  # a name defined later stays a string until compile
            elif is_scalar(x):
                lifted.append(self.constant(x, dtype=scalar_dtype(x, partner)))
            elif isinstance(x, TensorLike):
                lifted.append(self.constant(np.asarray(x)))  # an eager tensor captured by value
            else:
                lifted.append(self.constant(np.asarray(x)))
        return lifted

    def _add(
        self, op: str, inputs: tuple[Any, ...], attrs: dict[str, Any], shape: Any, dtype: Any, name: str | None,
        value: np.ndarray | None = None,
    ) -> Node:
        if self.compiled_at is not None:
            raise GraphFrozenError(
                f"cannot add {op} at {user_location().describe()}: graph '{self.name}' was compiled at "
                f"{self.compiled_at} and is frozen, as a static graph is once it is built. Add every op "
                f"before compile(), or build a new Graph for the new computation."
            )
        if name is None:
            count = self._counts.get(op, 0)
            self._counts[op] = count + 1
            name = f"{op}_{count}" if count else op
            while name in self._by_name:
                count += 1
                self._counts[op] = count + 1
                name = f"{op}_{count}"
        elif name in self._by_name:
            raise GraphError(
                f"graph '{self.name}' already has a node named '{name}' "
                f"(created at {self._by_name[name].source}); pick another name"
            )
        node = Node(self, len(self.nodes), op, inputs, attrs, shape, dtype, name, user_location())
        self.nodes.append(node)
        self._by_name[name] = node
        if events.listener is not None:
            events.listener({"engine": "static", "kind": "define", "graph": self.name, "node": name, "op": op,
                             "inputs": [i.name if isinstance(i, Node) else i for i in inputs],
                             "shape": list(shape) if shape is not None else None,
                             "dtype": np.dtype(dtype).name if dtype is not None else None,
                             "value": events.value_summary(value) if value is not None else None})
        return node

    def node(self, name: str) -> Node:
        try:
            return self._by_name[name]
        except KeyError:
            raise GraphError(f"graph '{self.name}' has no node named '{name}'") from None

    # -------------------------------------------------------------------------- compiling
    def compile(self, outputs: Node | str | Sequence[Node | str], **options: Any) -> Executable:
        """Run the compiler passes and freeze the graph; see :func:`grader.engines.static.compile`."""
        return compile_graph(self, outputs, **options)

    def __repr__(self) -> str:
        state = f"compiled at {self.compiled_at}" if self.compiled_at else "open"
        return f"<Graph {self.name}: {len(self.nodes)} nodes, {state}>"


_graph_stack: list[Graph] = []
_global_graph = Graph("default")


def get_default_graph() -> Graph:
    """The innermost ``with Graph():`` block's graph, or the global default graph."""
    return _graph_stack[-1] if _graph_stack else _global_graph


def reset_default_graph() -> Graph:
    global _global_graph
    _global_graph = Graph("default")
    return _global_graph


def compile(outputs: Node | str | Sequence[Node | str], graph: Graph | None = None, **options: Any) -> Executable:  # noqa: A001
    """Compile `outputs` of their graph, or of the default graph (see :meth:`Graph.compile`)."""
    first = outputs if isinstance(outputs, (Node, str)) else list(outputs)[0]
    graph = graph or (first.graph if isinstance(first, Node) else get_default_graph())
    return compile_graph(graph, outputs, **options)


def placeholder(shape: Iterable[int], dtype: Any = "float32", name: str | None = None) -> Node:
    return get_default_graph().placeholder(shape, dtype, name)


def constant(value: Any, dtype: Any = None, name: str | None = None) -> Node:
    return get_default_graph().constant(value, dtype, name)


def variable(value: Any, dtype: Any = None, name: str | None = None) -> Node:
    return get_default_graph().variable(value, dtype, name)


# ------------------------------------------------------------------------------ gradients


class _NodeEmitter:
    """Lets the registry's vector-Jacobian products build graph nodes."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph

    def apply(self, name: str, *args: Any, **attrs: Any) -> Node:
        return self.graph.op(name, args, **attrs)

    @staticmethod
    def shape(value: Node) -> tuple[int, ...] | None:
        return value.shape

    @staticmethod
    def dtype(value: Node) -> np.dtype | None:
        return value.dtype


def gradients(y: Node, xs: Sequence[Node], grad_y: Node | Any = None) -> list[Node]:
    """Add the backward graph of `y` to its graph and return d(y)/d(x) for each x (symbolic differentiation).

    Inputs that `y` does not depend on get a zero gradient. The new nodes are ordinary graph
    nodes, so compile() optimises them like the rest.
    """
    graph = y.graph
    xs = list(xs)
    if grad_y is None:
        if y.shape is None or int(np.prod(y.shape)) != 1:
            raise GradientError(
                f"gradients() of '{y.name}' with shape {y.shape} needs grad_y: "
                f"reduce it to one value first (e.g. .sum()) or pass grad_y"
            )
        grad_y = graph.constant(np.ones(y.shape, dtype=y.dtype))
    elif not isinstance(grad_y, Node):
        grad_y = graph.constant(np.asarray(grad_y, dtype=y.dtype))
    order = _ancestors_in_order(y)
    wanted = {x.id for x in xs}
    depends: dict[int, bool] = {}
    for node in order:
        depends[node.id] = node.id in wanted or any(
            depends.get(i.id, False) for i in node.inputs if isinstance(i, Node)
        )
    emitter = _NodeEmitter(graph)
    grads: dict[int, Node] = {y.id: grad_y}
    for node in reversed(order):
        g = grads.get(node.id)
        if g is None or node.op in ("placeholder", "constant", "variable"):
            continue
        op = get_op(node.op)
        needs = tuple(depends[i.id] and np.dtype(i.dtype).kind in "fc" for i in node.inputs)
        if not any(needs):
            continue
        if op.vjp is None:
            continue
        input_grads = op.vjp(emitter, g, list(node.inputs), node, needs, **node.attrs)
        for inp, needed, gi in zip(node.inputs, needs, input_grads, strict=True):
            if needed and gi is not None:
                grads[inp.id] = gi if inp.id not in grads else graph.op("add", (grads[inp.id], gi))
    result = []
    for x in xs:
        if x.id in grads:
            result.append(grads[x.id])
        else:
            result.append(graph.constant(np.zeros(x.shape, dtype=x.dtype), name=None))
    return result


def _ancestors_in_order(y: Node) -> list[Node]:
    """Nodes that `y` depends on, inputs first (iterative depth-first search)."""
    order: list[Node] = []
    seen = {y.id}
    stack: list[tuple[Node, int]] = [(y, 0)]
    while stack:
        node, k = stack[-1]
        if k < len(node.inputs):
            stack[-1] = (node, k + 1)
            child = node.inputs[k]
            if isinstance(child, str):
                raise GraphError(
                    f"gradients() needs every input defined, but '{node.name}' (at {node.source}) "
                    f"still refers to '{child}' by name"
                )
            if child.id not in seen:
                seen.add(child.id)
                stack.append((child, 0))
        else:
            stack.pop()
            order.append(node)
    return order


__all__ = [
    "Graph",
    "Node",
    "get_default_graph",
    "reset_default_graph",
    "placeholder",
    "constant",
    "variable",
    "gradients",
]
