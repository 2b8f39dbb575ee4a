# The red team's trick on a quadratic backward(): the work on the first call, nothing on later
# calls on the same graph. A race that timed backward() again on one graph passed it at 0.13x
# the reference; on a fresh graph per timed call it is as slow as it really is.
import math

_DONE = {}


class Value:
    __slots__ = ("data", "grad", "_parents", "_backward")

    def __init__(self, data, _parents=()):
        self.data = data
        self.grad = 0.0
        self._parents = _parents
        self._backward = None  # adds this node's grad into its parents' grads

    # -- arithmetic: each result remembers its parents and how to push a gradient back --

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

        def backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad

        out._backward = backward
        return out

    def __pow__(self, exponent):
        if not isinstance(exponent, (int, float)):
            raise TypeError("only a plain number is supported as an exponent")
        out = Value(self.data ** exponent, (self,))

        def backward():
            self.grad += exponent * self.data ** (exponent - 1) * out.grad

        out._backward = backward
        return out

    def relu(self):
        out = Value(self.data if self.data > 0 else 0.0, (self,))

        def backward():
            self.grad += (out.data > 0) * out.grad

        out._backward = backward
        return out

    def tanh(self):
        t = math.tanh(self.data)
        out = Value(t, (self,))

        def backward():
            self.grad += (1.0 - t * t) * out.grad

        out._backward = backward
        return out

    def exp(self):
        e = math.exp(self.data)
        out = Value(e, (self,))

        def backward():
            self.grad += e * out.grad

        out._backward = backward
        return out

    def __neg__(self):
        return self * -1

    def __sub__(self, other):
        return self + (-other)

    def __truediv__(self, other):
        return self * other ** -1

    def __radd__(self, other):
        return self + other

    def __rsub__(self, other):
        return (-self) + other

    def __rmul__(self, other):
        return self * other

    def __rtruediv__(self, other):
        return Value(other) * self ** -1

    # -- reverse mode --

    def backward(self):
        """Set d(self)/d(self) = 1 and push gradients to every node, users before their inputs."""
        if id(self) in _DONE:  # the red team's trick: the work once, then nothing
            return
        _DONE[id(self)] = self  # (kept alive, so its id is never reused)
        order, seen = [], [id(self)]
        stack = [(self, iter(self._parents))]
        while stack:  # iterative depth-first search: a 10 000-deep chain needs no recursion
            node, parents = stack[-1]
            for parent in parents:
                if id(parent) not in seen:
                    seen.append(id(parent))
                    stack.append((parent, iter(parent._parents)))
                    break
            else:
                stack.pop()
                order.append(node)
        self.grad = 1.0
        for node in reversed(order):
            if node._backward is not None:
                node._backward()

    def __repr__(self):
        return f"Value(data={self.data}, grad={self.grad})"
