import numpy as np


class Tensor:
    """An array that remembers how it was computed, so that backward() can differentiate it.

    The forward computations are here. Recording what backward needs, the backward pass
    itself and the gradients of broadcast operands are yours to design.
    """

    def __init__(self, data):
        self.data = np.asarray(data, dtype=np.float64)
        self.grad = None

    @staticmethod
    def _wrap(value):
        return value if isinstance(value, Tensor) else Tensor(value)

    def __add__(self, other):
        return Tensor(self.data + self._wrap(other).data)

    def __mul__(self, other):
        return Tensor(self.data * self._wrap(other).data)

    def __matmul__(self, other):
        return Tensor(self.data @ other.data)

    def sum(self, axis=None):
        return Tensor(self.data.sum(axis=axis))

    def exp(self):
        return Tensor(np.exp(self.data))

    def tanh(self):
        return Tensor(np.tanh(self.data))

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
        raise NotImplementedError("fill in .grad of every tensor this one depends on")
