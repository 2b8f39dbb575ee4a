"""The dynamic engine (define-by-run, the PyTorch way).

Every line computes its value the moment it runs. When an input requires grad, the op
also leaves an entry on the tape (a :class:`TapeNode` hanging off the result), so that
``backward()`` can walk the recorded graph in reverse topological order and apply each
op's vector-Jacobian product from the shared registry. Python control flow needs no
special support: the tape only ever sees the ops that actually ran.
"""
from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from . import events, functional
from .errors import FreedGraphError, GradientError, ShapeError, SourceLocation, user_location
from .functional import TensorLike
from .ops import OpDef, OpRuleError, get_op, is_scalar, partner_dtype, scalar_dtype


class _GradMode(threading.local):
    enabled = True


_grad_mode = _GradMode()


class no_grad(contextlib.ContextDecorator):
    """Inside this block (or decorated function) ops record nothing on the tape."""

    def __enter__(self) -> no_grad:
        self._previous = _grad_mode.enabled
        _grad_mode.enabled = False
        return self

    def __exit__(self, *exc: Any) -> None:
        _grad_mode.enabled = self._previous


class enable_grad(contextlib.ContextDecorator):
    """Switch recording back on inside a ``no_grad`` block."""

    def __enter__(self) -> enable_grad:
        self._previous = _grad_mode.enabled
        _grad_mode.enabled = True
        return self

    def __exit__(self, *exc: Any) -> None:
        _grad_mode.enabled = self._previous


def is_grad_enabled() -> bool:
    return _grad_mode.enabled


class TapeNode:
    """One recorded op: what ran, on which tensors, and what backward() needs to differentiate it."""

    __slots__ = ("op", "inputs", "attrs", "needs", "saved", "output", "hooks", "freed_by")

    def __init__(self, op: OpDef, inputs: tuple[Any, ...], attrs: dict[str, Any], needs: tuple[bool, ...],
                 saved: tuple[Any, ...], output: Tensor) -> None:
        self.op = op
        self.inputs = inputs          # the operands (Tensors or arrays), kept for the topology
        self.attrs = attrs
        self.needs = needs            # which inputs want a gradient
        self.saved = saved            # (input arrays, output array): what the vjp reads
        # weak, because the output owns this node; consumers keep the output alive anyway
        self.output = weakref.ref(output)
        self.hooks: list[Callable[..., Any]] = []
        self.freed_by: SourceLocation | None = None

    def __repr__(self) -> str:
        return f"<TapeNode {self.op.name}{' (freed)' if self.freed_by else ''}>"


class RemovableHandle:
    """Returned by ``register_hook``; ``remove()`` takes the hook off again."""

    def __init__(self, hooks: list[Any], hook: Callable[..., Any]) -> None:
        self._hooks, self._hook = hooks, hook

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


class Tensor(TensorLike):
    """A numpy array with an optional gradient and, when computed from tensors that
    require grad, a link to the tape entry that produced it."""

    __slots__ = ("data", "requires_grad", "grad", "_node", "_hooks", "name", "__weakref__")
    _priority = 1
    data: np.ndarray

    def __init__(self, data: Any, requires_grad: bool = False, dtype: Any = None, name: str | None = None) -> None:
        if isinstance(data, Tensor):
            data = data.data
        array = np.array(data, dtype=dtype) if dtype is not None else np.asarray(data)
        if requires_grad and array.dtype.kind not in "fc":
            raise GradientError(
                f"only floating point tensors can require grad, got dtype {array.dtype}; "
                f"pass dtype='float32' or float values")
        self.data = array
        self.requires_grad = bool(requires_grad)
        self.grad: Tensor | None = None
        self._node: TapeNode | None = None
        self._hooks: list[Callable[..., Any]] = []
        self.name = name

    # the dispatcher -------------------------------------------------------------------------
    @classmethod
    def _apply(cls, op: OpDef, args: Sequence[Any], attrs: dict[str, Any]) -> Tensor:
        arrays: list[np.ndarray] = []
        wants_grad = False
        has_scalar = False
        for arg in args:
            if isinstance(arg, Tensor):
                arrays.append(arg.data)
                wants_grad = wants_grad or arg.requires_grad
            elif isinstance(arg, np.ndarray):
                arrays.append(arg)
            elif is_scalar(arg):
                arrays.append(arg)
                has_scalar = True
            elif isinstance(arg, TensorLike):
                raise TypeError(f"cannot mix a {type(arg).__name__} into an eager {op.name}")
            else:
                arrays.append(np.asarray(arg))
        if has_scalar:
            # a Python number takes its partner's dtype (numpy's weak-scalar rule)
            partner = partner_dtype([a.dtype for a in arrays if isinstance(a, np.ndarray)])
            arrays = [np.asarray(a, dtype=scalar_dtype(a, partner)) if not isinstance(a, np.ndarray) else a
                      for a in arrays]
        try:
            if op.canon is not None:
                attrs = op.canon(attrs, [a.shape for a in arrays])
            data = op.forward(*arrays, **attrs)
        except (OpRuleError, ValueError, TypeError) as exc:
            raise _eager_error(op, arrays, attrs, exc) from None
        if type(data) is not np.ndarray:
            data = np.asarray(data)
        out = Tensor.__new__(Tensor)
        out.data = data
        out.grad = None
        out._hooks = []
        out.name = None
        if wants_grad and _grad_mode.enabled and op.vjp is not None:
            out.requires_grad = True
            needs = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
            out._node = TapeNode(op, tuple(args), attrs, needs, (arrays, data), out)
        else:
            out.requires_grad = False
            out._node = None
        if events.listener is not None:
            events.listener({"engine": "eager", "kind": "op", "op": op.name, "output": id(out),
                             "inputs": [id(a) if isinstance(a, Tensor) else events.value_summary(a) for a in args],
                             "value": events.value_summary(data), "taped": out._node is not None})
        return out

    # plain data access -------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self.data.shape

    @property
    def dtype(self) -> np.dtype:
        return self.data.dtype

    @property
    def ndim(self) -> int:
        return self.data.ndim

    @property
    def size(self) -> int:
        return self.data.size

    @property
    def is_leaf(self) -> bool:
        return self._node is None

    @property
    def grad_fn(self) -> str | None:
        """The name of the op that made this tensor, when it is on the tape."""
        return self._node.op.name if self._node is not None else None

    def numpy(self) -> np.ndarray:
        return self.data

    def item(self) -> Any:
        return self.data.item()

    def detach(self) -> Tensor:
        return Tensor(self.data)

    def requires_grad_(self, flag: bool = True) -> Tensor:
        if not self.is_leaf:
            raise GradientError("requires_grad_() only works on leaf tensors; use detach() first")
        self.requires_grad = flag
        return self

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        return self.data if dtype is None else self.data.astype(dtype)

    def __bool__(self) -> bool:
        return bool(self.data)

    def __float__(self) -> float:
        return float(self.data)

    def __int__(self) -> int:
        return int(self.data)

    def __len__(self) -> int:
        return len(self.data)

    def __repr__(self) -> str:
        extra = f", grad_fn={self.grad_fn}" if self._node is not None else (
            ", requires_grad=True" if self.requires_grad else "")
        return f"Tensor({np.array2string(self.data, separator=', ')}{extra})"

    # autograd --------------------------------------------------------------------------
    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
        """Call `hook(grad)` when this tensor's gradient is ready; a returned tensor replaces it."""
        if not self.requires_grad:
            raise GradientError("cannot register a hook on a tensor that does not require grad")
        hooks = self._hooks if self._node is None else self._node.hooks
        hooks.append(hook)
        return RemovableHandle(hooks, hook)

    def retain_grad(self) -> None:
        """Keep the gradient of this non-leaf tensor in ``.grad`` after backward()."""
        if self._node is None:
            return
        target = weakref.ref(self)

        def keep(grad: Tensor) -> None:
            tensor = target()
            if tensor is not None:
                tensor.grad = grad if tensor.grad is None else Tensor(tensor.grad.data + grad.data)
        self._node.hooks.append(keep)

    def backward(self, grad: Any = None, retain_graph: bool | None = None, create_graph: bool = False) -> None:
        """Reverse-mode autodiff from this tensor; gradients add up in the leaves' ``.grad``.

        As in torch, `retain_graph` defaults to `create_graph`: a graph of gradients needs the
        forward values again.
        """
        if not self.requires_grad:
            raise GradientError(
                "backward() on a tensor that does not require grad: no input had requires_grad=True, "
                "or it was computed under no_grad()")
        if grad is None:
            if self.data.size != 1:
                raise GradientError(
                    f"backward() without a gradient only works on a single value, this tensor has shape "
                    f"{self.shape}; reduce it first (e.g. .sum()) or pass grad=")
            grad = np.ones_like(self.data)
        grad = grad.data if isinstance(grad, Tensor) else np.asarray(grad, dtype=self.dtype)
        if grad.shape != self.shape:
            raise GradientError(f"grad has shape {grad.shape}, the tensor has shape {self.shape}")
        run_backward(self, grad, retain_graph=retain_graph, create_graph=create_graph)


functional.set_default_engine(Tensor)


def tensor(data: Any, requires_grad: bool = False, dtype: Any = None, name: str | None = None) -> Tensor:
    """Make a leaf tensor (numpy dtype rules: Python floats become float64 unless `dtype` says)."""
    leaf = Tensor(data, requires_grad=requires_grad, dtype=dtype, name=name)
    if events.listener is not None:
        events.listener({"engine": "eager", "kind": "tensor", "output": id(leaf), "name": name,
                         "value": events.value_summary(leaf.data), "requires_grad": leaf.requires_grad})
    return leaf


def _eager_error(op: OpDef, arrays: list[Any], attrs: dict[str, Any], exc: Exception) -> Exception:
    shapes = ", ".join(str(getattr(a, "shape", ())) for a in arrays)
    where = user_location()
    return ShapeError(f"{op.name} at {where.describe()}: {exc} (operand shapes {shapes})")


# ------------------------------------------------------------------------------- backward


class _ArrayEmitter:
    """Runs vector-Jacobian products on plain arrays: the fast path, nothing is recorded."""

    @staticmethod
    def apply(name: str, *args: Any, **attrs: Any) -> np.ndarray:
        op = get_op(name)
        if any(not isinstance(a, np.ndarray) for a in args):
            partner = partner_dtype([a.dtype for a in args if isinstance(a, np.ndarray)])
            args = tuple(a if isinstance(a, np.ndarray) else np.asarray(a, dtype=scalar_dtype(a, partner))
                         for a in args)
        if op.canon is not None:
            attrs = op.canon(attrs, [a.shape for a in args])
        out = op.forward(*args, **attrs)
        return out if type(out) is np.ndarray else np.asarray(out)

    @staticmethod
    def shape(value: np.ndarray) -> tuple[int, ...]:
        return value.shape

    @staticmethod
    def dtype(value: np.ndarray) -> np.dtype:
        return value.dtype


class _TensorEmitter:
    """Runs vector-Jacobian products on tensors, so the gradients are themselves on the tape."""

    @staticmethod
    def apply(name: str, *args: Any, **attrs: Any) -> Tensor:
        tensor: Tensor = functional.apply(name, *args, **attrs)
        return tensor

    @staticmethod
    def shape(value: Any) -> tuple[int, ...]:
        return tuple(np.shape(value.data if isinstance(value, Tensor) else value))

    @staticmethod
    def dtype(value: Any) -> np.dtype:
        return value.dtype if isinstance(value, (Tensor, np.ndarray)) else np.asarray(value).dtype


def _topological_order(root: TapeNode) -> list[TapeNode]:
    """Tape nodes reachable from `root`, each after all its inputs (iterative: no recursion limit)."""
    order: list[TapeNode] = []
    seen = {id(root)}
    stack: list[tuple[TapeNode, int]] = [(root, 0)]
    while stack:
        node, next_input = stack[-1]
        if next_input < len(node.inputs):
            stack[-1] = (node, next_input + 1)
            child = node.inputs[next_input]
            child_node = child._node if isinstance(child, Tensor) else None
            if child_node is not None and id(child_node) not in seen:
                seen.add(id(child_node))
                stack.append((child_node, 0))
        else:
            stack.pop()
            order.append(node)
    return order


def _accumulate(store: dict[int, Any], key: int, grad: Any) -> None:
    previous = store.get(key)
    store[key] = grad if previous is None else previous + grad


def run_backward(root: Tensor, grad: np.ndarray, retain_graph: bool | None = None, create_graph: bool = False,
                 store: bool = True) -> dict[int, tuple[Tensor, Tensor]]:
    """Propagate `grad` from `root` to every leaf that requires grad.

    With `store` the gradients add up in each leaf's ``.grad``; either way they are returned
    as ``{id(leaf): (leaf, gradient)}``.
    """
    if retain_graph is None:
        retain_graph = create_graph
    emitter = _TensorEmitter if create_graph else _ArrayEmitter
    seed = Tensor(grad) if create_graph else grad
    leaf_grads: dict[int, Any] = {}
    leaves: dict[int, Tensor] = {}
    if root._node is None:
        leaves[id(root)] = root
        leaf_grads[id(root)] = seed
    else:
        location = user_location()
        node_grads: dict[int, Any] = {id(root._node): seed}
        context = contextlib.nullcontext() if create_graph else no_grad()
        with context:
            for node in reversed(_topological_order(root._node)):
                g = node_grads.pop(id(node), None)
                if g is None:
                    continue
                for hook in node.hooks:
                    g = _run_hook(hook, g, create_graph)
                if node.freed_by is not None:
                    raise FreedGraphError(
                        f"backward() reached the {node.op.name} op a second time, but the first backward() "
                        f"(at {node.freed_by}) freed the values it saved. Pass retain_graph=True to the "
                        f"first backward() to go through the graph twice, or recompute the forward pass.")
                if create_graph:
                    saved_inputs = zip(node.inputs, node.saved[0], strict=True)
                    xs = [a if isinstance(a, Tensor) else Tensor(arr) for a, arr in saved_inputs]
                    out = node.output()
                    out = out if out is not None else Tensor(node.saved[1])
                else:
                    xs, out = node.saved
                assert node.op.vjp is not None  # only differentiable ops are recorded with needs
                input_grads = node.op.vjp(emitter, g, xs, out, node.needs, **node.attrs)
                if events.listener is not None:
                    output = node.output()
                    events.listener({"engine": "eager", "kind": "backward", "op": node.op.name,
                                     "output": id(output) if output is not None else None,
                                     "grad": events.value_summary(g.data if isinstance(g, Tensor) else g)})
                for tensor_in, needed, gi in zip(node.inputs, node.needs, input_grads, strict=True):
                    if not needed or gi is None:
                        continue
                    if tensor_in._node is not None:
                        _accumulate(node_grads, id(tensor_in._node), gi)
                    else:
                        leaves[id(tensor_in)] = tensor_in
                        _accumulate(leaf_grads, id(tensor_in), gi)
                if not retain_graph:
                    node.saved = ()
                    node.freed_by = location
    results: dict[int, tuple[Tensor, Tensor]] = {}
    for key, leaf in leaves.items():
        g = leaf_grads[key]
        for hook in leaf._hooks:
            g = _run_hook(hook, g, create_graph)
        g = g if isinstance(g, Tensor) else Tensor(g)
        results[key] = (leaf, g)
        if store:
            leaf.grad = g if leaf.grad is None else (leaf.grad + g if create_graph else Tensor(leaf.grad.data + g.data))
    return results


def _run_hook(hook: Callable[..., Any], grad: Any, create_graph: bool) -> Any:
    as_tensor = grad if isinstance(grad, Tensor) else Tensor(grad)
    replaced = hook(as_tensor)
    if replaced is None:
        return grad
    if create_graph:
        return replaced if isinstance(replaced, Tensor) else Tensor(replaced)
    return replaced.data if isinstance(replaced, Tensor) else np.asarray(replaced)


def grad(
    outputs: Tensor,
    inputs: Iterable[Tensor],
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
) -> list[Tensor]:
    """Gradients of `outputs` with respect to the leaf tensors `inputs`; no ``.grad`` is touched."""
    inputs = list(inputs)
    if not outputs.requires_grad:
        raise GradientError("grad() of a tensor that does not require grad")
    if grad_outputs is None:
        if outputs.size != 1:
            raise GradientError(f"grad() of a tensor of shape {outputs.shape} needs grad_outputs")
        grad_outputs = np.ones_like(outputs.data)
    seed = grad_outputs.data if isinstance(grad_outputs, Tensor) else np.asarray(grad_outputs, dtype=outputs.dtype)
    found = run_backward(outputs, seed, retain_graph=retain_graph, create_graph=create_graph, store=False)
    return [found[id(t)][1] if id(t) in found else Tensor(np.zeros_like(t.data)) for t in inputs]


__all__ = [
    "Tensor",
    "TapeNode",
    "tensor",
    "no_grad",
    "enable_grad",
    "is_grad_enabled",
    "grad",
    "run_backward",
    "RemovableHandle",
]
