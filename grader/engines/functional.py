"""One functional API for both engines: ``F.exp(x)`` works on a dynamic Tensor, a static
graph Node and a tracer value alike.

The value's class decides what "applying an op" means: a Tensor computes now and records
a tape entry, a Node adds a vertex to its graph. When kinds meet, the symbolic one wins
(a Node times a Tensor is a Node: the tensor's value becomes a graph constant), which is
what lets the tracer run code written for the eager engine.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .ops import OPS, OpDef

_default_engine: type | None = None  # set by dynamic.py: plain numbers compute eagerly


def set_default_engine(engine: type) -> None:
    global _default_engine
    _default_engine = engine


class TensorLike:
    """Operators and methods shared by every engine's values; each op goes through ``apply``."""

    __slots__ = ()
    #: when values of two engines meet, the higher priority decides who applies the op
    _priority = 0
    # numpy must hand `array + value` to our __radd__ instead of broadcasting over objects
    __array_ufunc__ = None

    @classmethod
    def _apply(cls, op: OpDef, args: Sequence[Any], attrs: dict[str, Any]) -> TensorLike:
        raise NotImplementedError

    # arithmetic -----------------------------------------------------------------------
    def __add__(self, other: Any) -> Any: return apply("add", self, other)
    def __radd__(self, other: Any) -> Any: return apply("add", other, self)
    def __sub__(self, other: Any) -> Any: return apply("sub", self, other)
    def __rsub__(self, other: Any) -> Any: return apply("sub", other, self)
    def __mul__(self, other: Any) -> Any: return apply("mul", self, other)
    def __rmul__(self, other: Any) -> Any: return apply("mul", other, self)
    def __truediv__(self, other: Any) -> Any: return apply("div", self, other)
    def __rtruediv__(self, other: Any) -> Any: return apply("div", other, self)
    def __pow__(self, other: Any) -> Any: return apply("pow", self, other)
    def __rpow__(self, other: Any) -> Any: return apply("pow", other, self)
    def __matmul__(self, other: Any) -> Any: return apply("matmul", self, other)
    def __rmatmul__(self, other: Any) -> Any: return apply("matmul", other, self)
    def __neg__(self) -> Any: return apply("neg", self)
    def __pos__(self) -> Any: return self
    # comparisons build boolean values; == stays identity so values can live in sets and dicts
    def __gt__(self, other: Any) -> Any: return apply("greater", self, other)
    def __ge__(self, other: Any) -> Any: return apply("greater_equal", self, other)
    def __lt__(self, other: Any) -> Any: return apply("less", self, other)
    def __le__(self, other: Any) -> Any: return apply("less_equal", self, other)
    __hash__ = object.__hash__

    # methods ----------------------------------------------------------------------------
    def exp(self) -> Any: return apply("exp", self)
    def log(self) -> Any: return apply("log", self)
    def tanh(self) -> Any: return apply("tanh", self)
    def sigmoid(self) -> Any: return apply("sigmoid", self)
    def relu(self) -> Any: return apply("relu", self)
    def sum(self, axis: Any = None, keepdims: bool = False) -> Any:
        return apply("sum", self, axis=axis, keepdims=keepdims)
    def mean(self, axis: Any = None, keepdims: bool = False) -> Any:
        return apply("mean", self, axis=axis, keepdims=keepdims)
    def max(self, axis: Any = None, keepdims: bool = False) -> Any:
        return apply("max", self, axis=axis, keepdims=keepdims)
    def reshape(self, *shape: Any) -> Any: return apply("reshape", self, shape=_shape_arg(shape))
    def transpose(self, *axes: Any) -> Any: return apply("transpose", self, axes=_shape_arg(axes) if axes else None)
    def broadcast_to(self, shape: Any) -> Any: return apply("broadcast_to", self, shape=tuple(shape))
    def astype(self, dtype: Any) -> Any: return apply("cast", self, dtype=np.dtype(dtype).name)
    def softmax(self, axis: int = -1) -> Any: return softmax(self, axis)
    def log_softmax(self, axis: int = -1) -> Any: return log_softmax(self, axis)

    @property
    def T(self) -> Any:
        return apply("transpose", self, axes=None)


def _shape_arg(shape: tuple[Any, ...]) -> tuple[Any, ...]:
    # reshape(2, 3) and reshape((2, 3)) both work, as in numpy and torch
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(shape[0])
    return tuple(shape)


def apply(name: str, *args: Any, **attrs: Any) -> Any:
    """Apply the registered op `name`; the highest-priority engine among the arguments runs it."""
    op = OPS[name]
    engine = None
    for arg in args:
        if isinstance(arg, TensorLike):
            kind = type(arg)
            if engine is None or kind._priority > engine._priority:
                engine = kind
    if engine is None:
        engine = _default_engine
    if engine is None:
        raise RuntimeError("no engine is loaded: import grader.engines first")
    return engine._apply(op, args, attrs)


# primitives ---------------------------------------------------------------------------
def add(a: Any, b: Any) -> Any: return apply("add", a, b)
def sub(a: Any, b: Any) -> Any: return apply("sub", a, b)
def mul(a: Any, b: Any) -> Any: return apply("mul", a, b)
def div(a: Any, b: Any) -> Any: return apply("div", a, b)
def neg(a: Any) -> Any: return apply("neg", a)
def pow(a: Any, b: Any) -> Any: return apply("pow", a, b)  # noqa: A001 - mirrors numpy's name
def exp(a: Any) -> Any: return apply("exp", a)
def log(a: Any) -> Any: return apply("log", a)
def tanh(a: Any) -> Any: return apply("tanh", a)
def sigmoid(a: Any) -> Any: return apply("sigmoid", a)
def relu(a: Any) -> Any: return apply("relu", a)
def matmul(a: Any, b: Any) -> Any: return apply("matmul", a, b)
def maximum(a: Any, b: Any) -> Any: return apply("maximum", a, b)
def where(cond: Any, a: Any, b: Any) -> Any: return apply("where", cond, a, b)
def greater(a: Any, b: Any) -> Any: return apply("greater", a, b)
def greater_equal(a: Any, b: Any) -> Any: return apply("greater_equal", a, b)
def less(a: Any, b: Any) -> Any: return apply("less", a, b)
def less_equal(a: Any, b: Any) -> Any: return apply("less_equal", a, b)
def equal(a: Any, b: Any) -> Any: return apply("equal", a, b)
def cast(a: Any, dtype: Any) -> Any: return apply("cast", a, dtype=np.dtype(dtype).name)
def sum(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    return apply("sum", a, axis=axis, keepdims=keepdims)  # noqa: A001
def mean(a: Any, axis: Any = None, keepdims: bool = False) -> Any: return apply("mean", a, axis=axis, keepdims=keepdims)
def max(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    return apply("max", a, axis=axis, keepdims=keepdims)  # noqa: A001
def reshape(a: Any, shape: Any) -> Any: return apply("reshape", a, shape=tuple(shape))
def transpose(a: Any, axes: Any = None) -> Any: return apply("transpose", a, axes=axes)
def broadcast_to(a: Any, shape: Any) -> Any: return apply("broadcast_to", a, shape=tuple(shape))
def sum_to(a: Any, shape: Any) -> Any: return apply("sum_to", a, shape=tuple(shape))


# composites: built from primitives, so both engines and both derivatives come for free ---
def logsumexp(x: Any, axis: int = -1, keepdims: bool = False) -> Any:
    """log(sum(exp(x))) without overflow: the max is subtracted first."""
    peak = max(x, axis=axis, keepdims=True)
    total = log(sum(exp(x - peak), axis=axis, keepdims=True)) + peak
    return total if keepdims else reshape(total, _drop_axis(_shape_of(total), axis))


def log_softmax(x: Any, axis: int = -1) -> Any: return x - logsumexp(x, axis=axis, keepdims=True)
def softmax(x: Any, axis: int = -1) -> Any:
    shifted = exp(x - max(x, axis=axis, keepdims=True))
    return shifted / sum(shifted, axis=axis, keepdims=True)


def cross_entropy(logits: Any, target: Any, axis: int = -1) -> Any:
    """Mean cross-entropy between logits and `target`: one-hot/probabilities, or integer class ids."""
    if isinstance(target, (np.ndarray, list, tuple)) and np.asarray(target).dtype.kind in "iu":
        target = one_hot(np.asarray(target), _shape_of(logits)[axis], _dtype_of(logits))
    per_example = neg(sum(mul(target, log_softmax(logits, axis)), axis=axis))
    return mean(per_example)


def one_hot(labels: np.ndarray, classes: int, dtype: Any = np.float32) -> np.ndarray:
    return np.asarray(np.eye(classes, dtype=dtype)[np.asarray(labels)])


def _shape_of(x: Any) -> tuple[Any, ...]: return tuple(x.shape) if hasattr(x, "shape") else np.shape(x)
def _dtype_of(x: Any) -> np.dtype: return x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype
def _drop_axis(shape: tuple[Any, ...], axis: int) -> tuple[Any, ...]:
    axis %= len(shape)
    return shape[:axis] + shape[axis + 1 :]


__all__ = [
    "TensorLike",
    "apply",
    "add",
    "sub",
    "mul",
    "div",
    "neg",
    "pow",
    "exp",
    "log",
    "tanh",
    "sigmoid",
    "relu",
    "matmul",
    "maximum",
    "where",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "equal",
    "cast",
    "sum",
    "mean",
    "max",
    "reshape",
    "transpose",
    "broadcast_to",
    "sum_to",
    "logsumexp",
    "log_softmax",
    "softmax",
    "cross_entropy",
    "one_hot",
]
