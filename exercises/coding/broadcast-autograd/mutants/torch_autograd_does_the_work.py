# The library does the exercise: every Tensor wraps a torch tensor and torch's autograd computes
# every gradient, broadcast operands included. The rule refuses torch here.
import numpy as np
import torch


class Tensor:
    def __init__(self, data, _tensor=None):
        if _tensor is None:
            _tensor = torch.tensor(np.asarray(data, dtype=np.float64), requires_grad=True)
        self._t = _tensor

    @property
    def data(self):
        return self._t.detach().numpy()

    @property
    def grad(self):
        return None if self._t.grad is None else _plain(self._t.grad)

    @grad.setter
    def grad(self, value):
        self._t.grad = None if value is None else torch.as_tensor(np.asarray(value, dtype=np.float64))

    @staticmethod
    def _wrap(value):
        return value if isinstance(value, Tensor) else Tensor(value)

    @staticmethod
    def _of(result):
        result.retain_grad()
        return Tensor(None, result)

    def __add__(self, other):
        return self._of(self._t + self._wrap(other)._t)

    def __mul__(self, other):
        return self._of(self._t * self._wrap(other)._t)

    def __matmul__(self, other):
        return self._of(self._t @ other._t)

    def sum(self, axis=None):
        return self._of(self._t.sum() if axis is None else self._t.sum(dim=axis))

    def exp(self):
        return self._of(self._t.exp())

    def tanh(self):
        return self._of(self._t.tanh())

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
        if self._t.numel() != 1:
            raise ValueError("backward() needs a single-element output; call .sum() first")
        self._t.backward(retain_graph=True)


def _plain(tensor):
    array = tensor.numpy()
    return array[()] if array.ndim == 0 else array  # a gradient of shape () is a number, as numpy's ops give
