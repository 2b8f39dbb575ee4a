import math


class Value:
    """A scalar that remembers how it was computed, so gradients can flow back through it."""

    def __init__(self, data, _parents=()):
        self.data = data
        self.grad = 0.0
        self._parents = _parents
        self._backward = lambda: None

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other))

        def backward():
            self.grad += out.grad
            other.grad += out.grad

        out._backward = backward
        return out

    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other))
        # TODO: the local gradients of a product
        return out

    # TODO: __pow__ (with a plain number), relu(), tanh(), exp()
    # TODO: __neg__, __sub__, __truediv__ and the reflected __radd__, __rsub__, __rmul__, __rtruediv__

    def backward(self):
        # TODO: visit every node after all the nodes that use it, without recursion
        self.grad = 1.0
        self._backward()
