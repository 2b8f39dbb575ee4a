# Right rules, but a recursive depth-first search orders the graph: a long chain exceeds
# Python's recursion limit.
import numpy as np


def unbroadcast(grad, shape):
    """Sum ``grad`` over the axes that broadcasting added or stretched, so it gets ``shape`` back."""
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad


class Tensor:
    def __init__(self, data, _parents=()):
        self.data = np.asarray(data, dtype=np.float64)
        self.grad = None
        self._parents = _parents
        self._backward = None

    @staticmethod
    def _wrap(value):
        return value if isinstance(value, Tensor) else Tensor(value)

    def _accumulate(self, grad):
        grad = unbroadcast(grad, self.data.shape)
        self.grad = grad if self.grad is None else self.grad + grad

    def __add__(self, other):
        other = self._wrap(other)
        out = Tensor(self.data + other.data, (self, other))

        def backward():
            self._accumulate(out.grad)
            other._accumulate(out.grad)

        out._backward = backward
        return out

    def __mul__(self, other):
        other = self._wrap(other)
        out = Tensor(self.data * other.data, (self, other))

        def backward():
            self._accumulate(out.grad * other.data)
            other._accumulate(out.grad * self.data)

        out._backward = backward
        return out

    def __matmul__(self, other):
        out = Tensor(self.data @ other.data, (self, other))

        def backward():
            self._accumulate(out.grad @ other.data.T)
            other._accumulate(self.data.T @ out.grad)

        out._backward = backward
        return out

    def sum(self, axis=None):
        out = Tensor(self.data.sum(axis=axis), (self,))

        def backward():
            grad = out.grad if axis is None else np.expand_dims(out.grad, axis)
            self._accumulate(np.broadcast_to(grad, self.data.shape))

        out._backward = backward
        return out

    def exp(self):
        out = Tensor(np.exp(self.data), (self,))

        def backward():
            self._accumulate(out.grad * out.data)

        out._backward = backward
        return out

    def tanh(self):
        out = Tensor(np.tanh(self.data), (self,))

        def backward():
            self._accumulate(out.grad * (1.0 - out.data ** 2))

        out._backward = backward
        return out

    def __neg__(self):
        return self * -1.0

    def __sub__(self, other):
        return self + (-self._wrap(other))

    def __radd__(self, other):
        return self + other

    def __rmul__(self, other):
        return self * other

    def __rsub__(self, other):
        return (-self) + other

    def backward(self):
        if self.data.size != 1:
            raise ValueError("backward() needs a single-element output; call .sum() first")
        order, seen = [], set()

        def visit(node):
            seen.add(id(node))
            for parent in node._parents:
                if id(parent) not in seen:
                    visit(parent)
            order.append(node)

        visit(self)
        self.grad = np.ones_like(self.data)
        for node in reversed(order):
            if node._backward is not None:
                node._backward()
