"""The op registry shared by the static and the dynamic engine.

Each op is defined exactly once, here:

* ``forward``: numpy arrays in, a new numpy array out (broadcasting follows numpy);
* ``infer``: the shape and dtype rule, so a static graph knows every shape before it runs;
* ``vjp``: the vector-Jacobian product, written against an *emitter* so that one rule
  serves three masters: the eager engine's backward pass (plain arrays), its
  ``create_graph`` mode (tensors on the tape) and the static engine's symbolic
  ``gradients()`` (graph nodes);
* ``emit``: the line(s) of numpy code with ``out=`` that the static compiler pastes into
  its generated program, so compiled kernels write into preallocated buffers.

Composite ops (softmax, log_softmax, cross_entropy, ...) are built from these
primitives in :mod:`grader.engines.functional`, so they need no rule of their own.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol

import numpy as np

Shape = tuple[int, ...]


class OpRuleError(ValueError):
    """A shape or dtype rule refused its operands; the engines add the op and file:line."""


class Emitter(Protocol):
    """What a vector-Jacobian product may do: apply ops and look at shapes and dtypes."""

    def apply(self, op: str, *args: Any, **attrs: Any) -> Any: ...

    def shape(self, value: Any) -> Shape: ...

    def dtype(self, value: Any) -> np.dtype: ...


@dataclass(frozen=True, eq=False)
class OpDef:
    """One op: how to compute it, how to type it, how to differentiate it, how to emit it."""

    name: str
    arity: int
    forward: Callable[..., np.ndarray]
    infer: Callable[[list[Shape], list[np.dtype], dict[str, Any]], tuple[Shape, np.dtype]]
    vjp: Callable[..., Sequence[Any]] | None
    # elementwise ops are the ones the fusion pass may merge into a single kernel
    kind: str = "other"  # "elementwise" | "reduction" | "matmul" | "view" | "other"
    # emit(out, args, attrs) -> code lines writing the result into the buffer `out`
    emit: Callable[[str, list[str], dict[str, Any]], list[str]] | None = None
    # expr(args, attrs) -> an expression that allocates the result (views, unplanned runs)
    expr: Callable[[list[str], dict[str, Any]], str] | None = None
    # True when emit() stays correct if `out` is the same buffer as an input of equal shape
    inplace_safe: bool = False
    canon: Callable[[dict[str, Any], list[Shape]], dict[str, Any]] | None = None
    doc: str = ""

    @property
    def elementwise(self) -> bool:
        return self.kind == "elementwise"

    @property
    def differentiable(self) -> bool:
        return self.vjp is not None

    def canonical_attrs(self, attrs: dict[str, Any], shapes: list[Shape]) -> dict[str, Any]:
        """Attributes in one normal form (axes as sorted tuples, -1 resolved): CSE needs it."""
        return self.canon(attrs, shapes) if self.canon else attrs


OPS: dict[str, OpDef] = {}


def register(op: OpDef) -> OpDef:
    if op.name in OPS:
        raise ValueError(f"op {op.name!r} is registered twice")
    OPS[op.name] = op
    return op


def get_op(name: str) -> OpDef:
    try:
        return OPS[name]
    except KeyError:
        raise KeyError(f"unknown op {name!r}; known ops: {', '.join(sorted(OPS))}") from None


# ---------------------------------------------------------------------------- rules


def broadcast_shapes(*shapes: Shape) -> Shape:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise OpRuleError(
            "shapes " + ", ".join(str(tuple(s)) for s in shapes) + " cannot be broadcast together "
            "(numpy rule: trailing dimensions must be equal or 1)") from None


@lru_cache(maxsize=1024)
def _ufunc_dtype(ufunc: np.ufunc, dtypes: tuple[np.dtype, ...]) -> np.dtype:
    # numpy's own type resolution, so the static engine types exactly like numpy runs
    try:
        result: np.dtype = np.dtype(ufunc(*[np.ones(1, d) for d in dtypes]).dtype)
        return result
    except TypeError as exc:
        raise OpRuleError(f"{ufunc.__name__} does not accept dtypes {[str(d) for d in dtypes]}: {exc}") from None


def _elementwise_rule(ufunc: np.ufunc) -> Callable[..., Any]:
    def infer(shapes: list[Shape], dtypes: list[np.dtype], attrs: dict[str, Any]) -> tuple[Shape, np.dtype]:
        return broadcast_shapes(*shapes), _ufunc_dtype(ufunc, tuple(dtypes))
    return infer


def _normalize_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < max(ndim, 1) or (ndim == 0 and a not in (0, -1)):
            raise OpRuleError(f"axis {a} is out of range for an array with {ndim} dimension(s)")
        out.append(a % ndim if ndim else 0)
    if len(set(out)) != len(out):
        raise OpRuleError(f"axis {axis} repeats an axis")
    return tuple(sorted(out)) if ndim else ()


def _reduce_canon(attrs: dict[str, Any], shapes: list[Shape]) -> dict[str, Any]:
    return {"axis": _normalize_axes(attrs.get("axis"), len(shapes[0])),
            "keepdims": bool(attrs.get("keepdims", False))}


def _reduced_shape(shape: Shape, axis: tuple[int, ...], keepdims: bool) -> Shape:
    if keepdims:
        return tuple(1 if i in axis else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in axis)


def _reduce_rule(probe: Callable[..., Any]) -> Callable[..., Any]:
    def infer(shapes: Any, dtypes: Any, attrs: Any) -> Any:
        axis = attrs["axis"]
        dtype = probe(np.zeros((1,) * len(shapes[0]), dtypes[0]), axis=axis).dtype
        return _reduced_shape(shapes[0], axis, attrs["keepdims"]), dtype
    return infer


def _emit_ufunc(fn: str) -> Callable[..., Any]:
    return lambda out, args, attrs: [f"np.{fn}({', '.join(args)}, out={out})"]


def _expr_ufunc(fn: str) -> Callable[..., Any]:
    return lambda args, attrs: f"np.{fn}({', '.join(args)})"


# ---------------------------------------------------------------------------- vjp helpers


def unbroadcast(e: Emitter, g: Any, shape: Shape) -> Any:
    """Sum a gradient back down to the shape of the operand that was broadcast."""
    return g if e.shape(g) == tuple(shape) else e.apply("sum_to", g, shape=tuple(shape))


# ---------------------------------------------------------------------------- elementwise


def _binary(name: str, ufunc: np.ufunc, vjp: Callable[..., Any] | None, doc: str, fn: str | None = None) -> None:
    fn = fn or ufunc.__name__
    register(OpDef(
        name=name, arity=2, forward=ufunc, infer=_elementwise_rule(ufunc), vjp=vjp,
        kind="elementwise", emit=_emit_ufunc(fn), expr=_expr_ufunc(fn), inplace_safe=True, doc=doc))


def _unary(name: str, forward: Callable[..., Any], dtype_ufunc: np.ufunc, vjp: Callable[..., Any] | None, doc: str,
           emit: Callable[..., Any], expr: Callable[..., Any]) -> None:
    register(OpDef(
        name=name, arity=1, forward=forward, infer=_elementwise_rule(dtype_ufunc), vjp=vjp,
        kind="elementwise", emit=emit, expr=expr, inplace_safe=True, doc=doc))


def _vjp_add(e: Any, g: Any, xs: Any, out: Any, needs: Any, **attrs: Any) -> Any:
    a, b = xs
    return [unbroadcast(e, g, e.shape(a)) if needs[0] else None,
            unbroadcast(e, g, e.shape(b)) if needs[1] else None]


def _vjp_sub(e: Any, g: Any, xs: Any, out: Any, needs: Any, **attrs: Any) -> Any:
    a, b = xs
    return [unbroadcast(e, g, e.shape(a)) if needs[0] else None,
            unbroadcast(e, e.apply("neg", g), e.shape(b)) if needs[1] else None]


def _vjp_mul(e: Any, g: Any, xs: Any, out: Any, needs: Any, **attrs: Any) -> Any:
    a, b = xs
    return [unbroadcast(e, e.apply("mul", g, b), e.shape(a)) if needs[0] else None,
            unbroadcast(e, e.apply("mul", g, a), e.shape(b)) if needs[1] else None]


def _vjp_div(e: Any, g: Any, xs: Any, out: Any, needs: Any, **attrs: Any) -> Any:
    a, b = xs
    ga = gb = None
    if needs[0]:
        ga = unbroadcast(e, e.apply("div", g, b), e.shape(a))
    if needs[1]:
        # d(a/b)/db = -a/b^2 = -out/b, which reuses the forward result
        gb = unbroadcast(e, e.apply("neg", e.apply("div", e.apply("mul", g, out), b)), e.shape(b))
    return [ga, gb]


def _vjp_pow(e: Any, g: Any, xs: Any, out: Any, needs: Any, **attrs: Any) -> Any:
    a, b = xs
    ga = gb = None
    if needs[0]:
        ga = unbroadcast(e, e.apply("mul", g, e.apply("mul", b, e.apply("pow", a, e.apply("sub", b, 1)))), e.shape(a))
    if needs[1]:
        gb = unbroadcast(e, e.apply("mul", g, e.apply("mul", out, e.apply("log", a))), e.shape(b))
    return [ga, gb]


def _vjp_maximum(e: Any, g: Any, xs: Any, out: Any, needs: Any, **attrs: Any) -> Any:
    # ties split the gradient evenly, as torch.maximum does
    a, b = xs
    half = e.apply("mul", g, 0.5)
    tie = e.apply("equal", a, b)
    ga = gb = None
    if needs[0]:
        ga = unbroadcast(e, e.apply("where", e.apply("greater", a, b), g, e.apply("where", tie, half, 0)), e.shape(a))
    if needs[1]:
        gb = unbroadcast(e, e.apply("where", e.apply("greater", b, a), g, e.apply("where", tie, half, 0)), e.shape(b))
    return [ga, gb]


_binary("add", np.add, _vjp_add, "a + b")
_binary("sub", np.subtract, _vjp_sub, "a - b")
_binary("mul", np.multiply, _vjp_mul, "a * b")
_binary("div", np.true_divide, _vjp_div, "a / b", fn="divide")
_binary("pow", np.power, _vjp_pow, "a ** b")
_binary("maximum", np.maximum, _vjp_maximum, "elementwise max(a, b); ties share the gradient")
for _name, _ufunc, _doc in [("greater", np.greater, "a > b"), ("greater_equal", np.greater_equal, "a >= b"),
                            ("less", np.less, "a < b"), ("less_equal", np.less_equal, "a <= b"),
                            ("equal", np.equal, "a == b (elementwise)")]:
    _binary(_name, _ufunc, None, _doc)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    # the tanh form never overflows, unlike 1 / (1 + exp(-x)) for large negative x
    y = np.asarray(np.multiply(x, 0.5))  # 0-d input gives a scalar, which out= cannot fill
    np.tanh(y, out=y)
    y += 1
    y *= 0.5
    return y


def _emit_sigmoid(out: Any, args: Any, attrs: Any) -> Any:
    x = args[0]
    return [f"np.multiply({x}, 0.5, out={out})", f"np.tanh({out}, out={out})",
            f"np.add({out}, 1, out={out})", f"np.multiply({out}, 0.5, out={out})"]


def _relu(x: np.ndarray) -> np.ndarray:
    return np.asarray(np.maximum(x, 0))


_unary("neg", np.negative, np.negative, lambda e, g, xs, out, needs, **a: [e.apply("neg", g)],
       "-a", _emit_ufunc("negative"), _expr_ufunc("negative"))
_unary("exp", np.exp, np.exp, lambda e, g, xs, out, needs, **a: [e.apply("mul", g, out)],
       "e ** a", _emit_ufunc("exp"), _expr_ufunc("exp"))
_unary("log", np.log, np.log, lambda e, g, xs, out, needs, **a: [e.apply("div", g, xs[0])],
       "natural logarithm", _emit_ufunc("log"), _expr_ufunc("log"))
_unary("tanh", np.tanh, np.tanh,
       lambda e, g, xs, out, needs, **a: [e.apply("mul", g, e.apply("sub", 1, e.apply("mul", out, out)))],
       "hyperbolic tangent", _emit_ufunc("tanh"), _expr_ufunc("tanh"))
_unary("sigmoid", _sigmoid, np.tanh,
       lambda e, g, xs, out, needs, **a: [e.apply("mul", g, e.apply("mul", out, e.apply("sub", 1, out)))],
       "logistic function 1 / (1 + e ** -a)", _emit_sigmoid, lambda args, attrs: f"_sigmoid({args[0]})")
_unary("relu", _relu, np.negative,
       lambda e, g, xs, out, needs, **a: [e.apply("where", e.apply("greater", xs[0], 0), g, 0)],
       "max(a, 0)", lambda out, args, attrs: [f"np.maximum({args[0]}, 0, out={out})"],
       lambda args, attrs: f"np.maximum({args[0]}, 0)")


def _where_infer(shapes: Any, dtypes: Any, attrs: Any) -> Any:
    if dtypes[0] != np.bool_:
        raise OpRuleError(f"where() needs a boolean condition, got {dtypes[0]}; compare first, e.g. x > 0")
    return broadcast_shapes(*shapes), np.result_type(dtypes[1], dtypes[2])


def _vjp_where(e: Any, g: Any, xs: Any, out: Any, needs: Any, **attrs: Any) -> Any:
    c, a, b = xs
    return [None,
            unbroadcast(e, e.apply("where", c, g, 0), e.shape(a)) if needs[1] else None,
            unbroadcast(e, e.apply("where", c, 0, g), e.shape(b)) if needs[2] else None]


register(OpDef(
    name="where", arity=3, forward=np.where, infer=_where_infer, vjp=_vjp_where, kind="elementwise",
    # two copies instead of np.where, because np.where cannot write into a buffer
    emit=lambda out, args, attrs: [f"np.copyto({out}, {args[2]}, casting='unsafe')",
                                   f"np.copyto({out}, {args[1]}, where={args[0]}, casting='unsafe')"],
    expr=lambda args, attrs: f"np.where({', '.join(args)})", inplace_safe=False,
    doc="where(cond, a, b): a where cond holds, else b"))


def _cast_infer(shapes: Any, dtypes: Any, attrs: Any) -> Any:
    return shapes[0], np.dtype(attrs["dtype"])


def _vjp_cast(e: Any, g: Any, xs: Any, out: Any, needs: Any, **attrs: Any) -> Any:
    source = e.dtype(xs[0])
    return [e.apply("cast", g, dtype=source.name) if source.kind in "fc" else None]


register(OpDef(
    name="cast", arity=1, forward=lambda x, dtype: x.astype(dtype), infer=_cast_infer, vjp=_vjp_cast,
    kind="elementwise",
    emit=lambda out, args, attrs: [f"np.copyto({out}, {args[0]}, casting='unsafe')"],
    expr=lambda args, attrs: f"{args[0]}.astype({attrs['dtype']!r})", inplace_safe=False,
    canon=lambda attrs, shapes: {"dtype": np.dtype(attrs["dtype"]).name},
    doc="convert to another dtype"))


# ---------------------------------------------------------------------------- matmul


def _matmul_infer(shapes: Any, dtypes: Any, attrs: Any) -> Any:
    a, b = shapes
    if not a or not b:
        raise OpRuleError(f"matmul needs arrays with at least one dimension, got {a} @ {b}")
    a2 = (1,) + a if len(a) == 1 else a
    b2 = b + (1,) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        raise OpRuleError(f"matmul of {a} @ {b}: inner dimensions {a2[-1]} and {b2[-2]} differ")
    batch = broadcast_shapes(a2[:-2], b2[:-2])
    shape = batch + ((a2[-2],) if len(a) > 1 else ()) + ((b2[-1],) if len(b) > 1 else ())
    return shape, np.result_type(*dtypes)


def _swap_last(e: Any, x: Any) -> Any:
    nd = len(e.shape(x))
    return e.apply("transpose", x, axes=tuple(range(nd - 2)) + (nd - 1, nd - 2))


def _vjp_matmul(e: Any, g: Any, xs: Any, out: Any, needs: Any, **attrs: Any) -> Any:
    a, b = xs
    sa, sb = e.shape(a), e.shape(b)
    # treat vectors as matrices, as numpy does, then undo it on the way out
    a2 = e.apply("reshape", a, shape=(1,) + sa) if len(sa) == 1 else a
    b2 = e.apply("reshape", b, shape=sb + (1,)) if len(sb) == 1 else b
    sa2, sb2 = e.shape(a2), e.shape(b2)
    g2_shape = broadcast_shapes(sa2[:-2], sb2[:-2]) + (sa2[-2], sb2[-1])
    g2 = e.apply("reshape", g, shape=g2_shape) if e.shape(g) != g2_shape else g
    ga = gb = None
    if needs[0]:
        ga = unbroadcast(e, e.apply("matmul", g2, _swap_last(e, b2)), sa2)
        ga = e.apply("reshape", ga, shape=sa) if sa2 != sa else ga
    if needs[1]:
        gb = unbroadcast(e, e.apply("matmul", _swap_last(e, a2), g2), sb2)
        gb = e.apply("reshape", gb, shape=sb) if sb2 != sb else gb
    return [ga, gb]


register(OpDef(
    name="matmul", arity=2, forward=np.matmul, infer=_matmul_infer, vjp=_vjp_matmul, kind="matmul",
    emit=_emit_ufunc("matmul"), expr=_expr_ufunc("matmul"), doc="a @ b (numpy semantics)"))


# ---------------------------------------------------------------------------- reductions


def _keepdims_shape(e: Any, g: Any, in_shape: Any, axis: Any, keepdims: Any) -> Any:
    return g if keepdims else e.apply("reshape", g, shape=_reduced_shape(in_shape, axis, True))


def _vjp_sum(e: Any, g: Any, xs: Any, out: Any, needs: Any, axis: Any, keepdims: Any) -> Any:
    shape = e.shape(xs[0])
    return [e.apply("broadcast_to", _keepdims_shape(e, g, shape, axis, keepdims), shape=shape)]


def _vjp_mean(e: Any, g: Any, xs: Any, out: Any, needs: Any, axis: Any, keepdims: Any) -> Any:
    shape = e.shape(xs[0])
    count = int(np.prod([shape[i] for i in axis])) if axis else 1
    g = e.apply("mul", g, 1.0 / max(count, 1))
    return [e.apply("broadcast_to", _keepdims_shape(e, g, shape, axis, keepdims), shape=shape)]


def _vjp_max(e: Any, g: Any, xs: Any, out: Any, needs: Any, axis: Any, keepdims: Any) -> Any:
    # ties share the gradient evenly, as torch.amax does
    x = xs[0]
    shape = e.shape(x)
    out_k = _keepdims_shape(e, out, shape, axis, keepdims)
    g_k = _keepdims_shape(e, g, shape, axis, keepdims)
    hit = e.apply("equal", x, out_k)
    count = e.apply("sum", e.apply("cast", hit, dtype=e.dtype(g).name), axis=axis, keepdims=True)
    share = e.apply("div", g_k, count)
    return [e.apply("where", hit, share, 0)]


def _reduction(name: str, fn: Callable[..., Any], vjp: Callable[..., Any], doc: str) -> None:
    np_name = fn.__name__
    register(
        OpDef(
            name=name,
            arity=1,
            forward=lambda x, axis, keepdims: np.asarray(fn(x, axis=axis, keepdims=keepdims)),
            infer=_reduce_rule(fn),
            vjp=vjp,
            kind="reduction",
            canon=_reduce_canon,
            emit=lambda out, args, attrs: [
                f"np.{np_name}({args[0]}, axis={attrs['axis']!r}, keepdims={attrs['keepdims']!r}, out={out})"
            ],
            expr=lambda args, attrs: (
                f"np.asarray(np.{np_name}({args[0]}, axis={attrs['axis']!r}, keepdims={attrs['keepdims']!r}))"
            ),
            doc=doc,
        )
    )


_reduction("sum", np.sum, _vjp_sum, "sum over axes (None: all)")
_reduction("mean", np.mean, _vjp_mean, "mean over axes (None: all)")
_reduction("max", np.max, _vjp_max, "maximum over axes (None: all); ties share the gradient")


# ---------------------------------------------------------------------------- shape ops


def _reshape_canon(attrs: Any, shapes: Any) -> Any:
    shape = tuple(int(s) for s in attrs["shape"])
    size = int(np.prod(shapes[0]))
    if shape.count(-1) > 1:
        raise OpRuleError(f"reshape to {shape}: at most one dimension may be -1")
    if -1 in shape:
        known = int(np.prod([s for s in shape if s != -1]))
        if known == 0 or size % known:
            raise OpRuleError(f"cannot reshape {shapes[0]} ({size} elements) into {shape}")
        shape = tuple(size // known if s == -1 else s for s in shape)
    return {"shape": shape}


def _reshape_infer(shapes: Any, dtypes: Any, attrs: Any) -> Any:
    if int(np.prod(attrs["shape"])) != int(np.prod(shapes[0])):
        raise OpRuleError(f"cannot reshape {shapes[0]} ({int(np.prod(shapes[0]))} elements) into {attrs['shape']}")
    return attrs["shape"], dtypes[0]


register(
    OpDef(
        name="reshape",
        arity=1,
        forward=lambda x, shape: np.reshape(x, shape),
        infer=_reshape_infer,
        vjp=lambda e, g, xs, out, needs, shape: [e.apply("reshape", g, shape=e.shape(xs[0]))],
        kind="view",
        canon=_reshape_canon,
        expr=lambda args, attrs: f"np.reshape({args[0]}, {attrs['shape']!r})",
        doc="same data, new shape",
    )
)


def _transpose_canon(attrs: Any, shapes: Any) -> Any:
    nd = len(shapes[0])
    axes = attrs.get("axes")
    axes = tuple(reversed(range(nd))) if axes is None else tuple(int(a) % max(nd, 1) for a in axes)
    if sorted(axes) != list(range(nd)):
        raise OpRuleError(f"transpose axes {attrs.get('axes')} are not a permutation of {tuple(range(nd))}")
    return {"axes": axes}


register(
    OpDef(
        name="transpose",
        arity=1,
        forward=lambda x, axes: np.transpose(x, axes),
        infer=lambda shapes, dtypes, attrs: (tuple(shapes[0][a] for a in attrs["axes"]), dtypes[0]),
        vjp=lambda e, g, xs, out, needs, axes: [e.apply("transpose", g, axes=tuple(np.argsort(axes).tolist()))],
        kind="view",
        canon=_transpose_canon,
        expr=lambda args, attrs: f"np.transpose({args[0]}, {attrs['axes']!r})",
        doc="permute axes (None: reverse)",
    )
)


def _broadcast_to_infer(shapes: Any, dtypes: Any, attrs: Any) -> Any:
    target = attrs["shape"]
    if broadcast_shapes(shapes[0], target) != target:
        raise OpRuleError(f"cannot broadcast {shapes[0]} to {target}")
    return target, dtypes[0]


register(
    OpDef(
        name="broadcast_to",
        arity=1,
        forward=lambda x, shape: np.broadcast_to(x, shape),
        infer=_broadcast_to_infer,
        vjp=lambda e, g, xs, out, needs, shape: [unbroadcast(e, g, e.shape(xs[0]))],
        kind="view",
        canon=lambda attrs, shapes: {"shape": tuple(int(s) for s in attrs["shape"])},
        expr=lambda args, attrs: f"np.broadcast_to({args[0]}, {attrs['shape']!r})",
        doc="read-only broadcast view",
    )
)


def sum_to_axes(shape: Shape, target: Shape) -> tuple[int, ...]:
    """Axes of `shape` to sum (keeping dims) so that the result reshapes to `target`."""
    lead = len(shape) - len(target)
    return tuple(range(lead)) + tuple(i + lead for i, t in enumerate(target) if t == 1 and shape[i + lead] != 1)


def _sum_to(x: np.ndarray, shape: Shape) -> np.ndarray:
    axes = sum_to_axes(x.shape, shape)
    return (np.sum(x, axis=axes, keepdims=True) if axes else x).reshape(shape)


def _sum_to_infer(shapes: Any, dtypes: Any, attrs: Any) -> Any:
    target = attrs["shape"]
    if len(target) > len(shapes[0]) or broadcast_shapes(shapes[0], target) != tuple(shapes[0]):
        raise OpRuleError(f"cannot sum {shapes[0]} down to {target}")
    return target, dtypes[0]


def _emit_sum_to(out: Any, args: Any, attrs: Any) -> Any:
    return [f"np.sum({args[0]}, axis={attrs['axes']!r}, keepdims=True, out={out}.reshape({attrs['keep_shape']!r}))"]


register(
    OpDef(
        name="sum_to",
        arity=1,
        forward=lambda x, shape, **_: _sum_to(x, shape),
        infer=_sum_to_infer,
        vjp=lambda e, g, xs, out, needs, shape, **_: [e.apply("broadcast_to", g, shape=e.shape(xs[0]))],
        kind="reduction",
        emit=_emit_sum_to,
        canon=lambda attrs, shapes: {
            "shape": tuple(attrs["shape"]),
            # precomputed so that the emitted code is a single np.sum into the buffer
            "axes": sum_to_axes(shapes[0], tuple(attrs["shape"])),
            "keep_shape": (1,) * (len(shapes[0]) - len(attrs["shape"])) + tuple(attrs["shape"]),
        },
        expr=lambda args, attrs: f"_sum_to({args[0]}, {attrs['shape']!r})",
        doc="sum a broadcast array back down to `shape` (the adjoint of broadcast_to)",
    )
)


#: names the generated code of a compiled plan may use, beside numpy as ``np``
CODEGEN_GLOBALS: dict[str, Any] = {"np": np, "_sigmoid": _sigmoid, "_sum_to": _sum_to}


# ---------------------------------------------------------------------------- scalars


def scalar_dtype(value: Any, partner: np.dtype | None) -> np.dtype:
    """The dtype a Python scalar takes next to an array (numpy's NEP 50 'weak scalar' rule)."""
    if partner is None:
        return np.asarray(value).dtype
    try:
        return np.result_type(partner, value)
    except (TypeError, OverflowError):
        return np.result_type(partner, np.asarray(value).dtype)


def is_scalar(value: Any) -> bool:
    return isinstance(value, (bool, int, float, np.number, np.bool_)) and not isinstance(value, np.ndarray)


def partner_dtype(dtypes: Sequence[np.dtype]) -> np.dtype | None:
    """The dtype a scalar operand adapts to: the first non-boolean one (where's condition is not)."""
    for d in dtypes:
        if d != np.bool_:
            return d
    return dtypes[0] if dtypes else None


def describe_ops() -> list[dict[str, Any]]:
    """The registry as data, for lessons and docs."""
    return [
        {"name": op.name, "arity": op.arity, "kind": op.kind, "differentiable": op.differentiable, "doc": op.doc}
        for op in OPS.values()
    ]


__all__ = ["OPS", "OpDef", "OpRuleError", "Emitter", "register", "get_op", "unbroadcast",
           "broadcast_shapes", "scalar_dtype", "is_scalar", "partner_dtype", "CODEGEN_GLOBALS",
           "describe_ops", "sum_to_axes"]
