"""The tracer: run an ordinary Python function on symbolic values and keep the graph it builds.

This is the bridge between the two engines (the idea behind torch.fx, jax.jit and
tf.function): code written for the eager engine runs once on tracer values, every op it
applies lands in a static graph, and that graph is compiled like any other. Control flow
on shapes is fine (shapes are known); control flow on *values* is not, and is reported
at the user's line, because the tracer would silently record only one branch.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .dynamic import Tensor
from .errors import GraphError
from .static.compile import Executable
from .static.graph import Graph, Node


class TracedFunction:
    """A traced function: its static graph, its inputs and outputs, and a lazily compiled plan."""

    def __init__(
        self, fn: Callable[..., Any], graph: Graph, inputs: list[Node], outputs: list[Node], single: bool
    ) -> None:
        self.fn = fn
        self.graph = graph
        self.inputs = inputs
        self.outputs = outputs
        self._single = single
        self._executable: Executable | None = None

    def compile(self, **options: Any) -> Executable:
        if self._executable is None or options:
            executable = self.graph.compile(self.outputs[0] if self._single else self.outputs, **options)
            if options:
                return executable
            self._executable = executable
        return self._executable

    def __call__(self, *args: Any) -> Any:
        executable = self.compile()
        return executable.run({node: np.asarray(arg) for node, arg in zip(self.inputs, args, strict=True)})

    def __repr__(self) -> str:
        return f"<TracedFunction {getattr(self.fn, '__name__', 'fn')}: {len(self.graph.nodes)} nodes>"


def trace(fn: Callable[..., Any], *example_args: Any, names: Sequence[str] | None = None) -> TracedFunction:
    """Run `fn` once on placeholders shaped like `example_args` and return the graph it built."""
    graph = Graph(f"trace_{getattr(fn, '__name__', 'fn')}")
    graph.tracing = True
    arg_names = list(names) if names else _parameter_names(fn, len(example_args))
    inputs = []
    for name, example in zip(arg_names, example_args, strict=True):
        array = example.data if isinstance(example, Tensor) else np.asarray(example)
        inputs.append(graph.placeholder(array.shape, array.dtype, name=name))
    with graph:
        result = fn(*inputs)
    single = not isinstance(result, (tuple, list))
    outputs = []
    for value in [result] if single else list(result):
        if isinstance(value, Node):
            outputs.append(value)
        elif isinstance(value, (Tensor, np.ndarray, int, float)):
            outputs.append(graph.constant(np.asarray(value)))  # it does not depend on the inputs
        else:
            raise GraphError(f"traced function returned {type(value).__name__}; return tensors (or a tuple of them)")
    graph.tracing = False
    return TracedFunction(fn, graph, inputs, outputs, single)


def jit(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Trace and compile `fn` on its first call for each input signature (shapes and dtypes)."""
    cache: dict[tuple[Any, ...], TracedFunction] = {}

    @functools.wraps(fn)
    def compiled(*args: Any) -> Any:
        arrays = [a.data if isinstance(a, Tensor) else np.asarray(a) for a in args]
        key = tuple((a.shape, a.dtype.str) for a in arrays)
        if key not in cache:
            cache[key] = trace(fn, *arrays)
        return cache[key](*arrays)

    compiled.cache = cache  # type: ignore[attr-defined]
    return compiled


def _parameter_names(fn: Callable[..., Any], count: int) -> list[str]:
    code = getattr(fn, "__code__", None)
    names = list(code.co_varnames[: code.co_argcount]) if code else []
    return (names + [f"arg{i}" for i in range(len(names), count)])[:count]


__all__ = ["trace", "jit", "TracedFunction"]
