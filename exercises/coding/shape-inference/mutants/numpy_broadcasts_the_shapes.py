# The library does the exercise: numpy's broadcast_shapes works out every broadcast shape.


import numpy as np


class ShapeError(ValueError):
    pass


class Node:
    def __init__(self, name, op, shape):
        self.name = name
        self.op = op
        self.shape = tuple(shape)

    def __repr__(self):
        return f"Node({self.name!r}, {self.op}, shape={self.shape})"


def broadcast(name, op, a, b):
    """numpy knows the rule: ask it."""
    try:
        return tuple(np.broadcast_shapes(tuple(a), tuple(b)))
    except ValueError:
        raise ShapeError(f"{op} {name!r}: shapes {a} and {b} do not broadcast") from None


class Graph:
    def __init__(self):
        self.nodes = {}

    def _add(self, name, op, shape):
        if name in self.nodes:
            raise ShapeError(f"{op} {name!r}: a node of that name already exists")
        node = Node(name, op, shape)
        self.nodes[name] = node
        return node

    def input(self, name, shape):
        shape = tuple(shape)
        if any(type(d) is not int or d < 1 for d in shape):
            raise ShapeError(f"input {name!r}: sizes must be positive integers, got {shape}")
        return self._add(name, "input", shape)

    def add(self, name, a, b):
        return self._add(name, "add", broadcast(name, "add", a.shape, b.shape))

    def mul(self, name, a, b):
        return self._add(name, "mul", broadcast(name, "mul", a.shape, b.shape))

    def matmul(self, name, a, b):
        if len(a.shape) < 2 or len(b.shape) < 2:
            raise ShapeError(f"matmul {name!r}: both operands need at least 2 dimensions, got {a.shape} and {b.shape}")
        if a.shape[-1] != b.shape[-2]:
            raise ShapeError(
                f"matmul {name!r}: inner sizes differ: {a.shape} @ {b.shape} ({a.shape[-1]} vs {b.shape[-2]})"
            )
        batch = broadcast(name, "matmul", a.shape[:-2], b.shape[:-2])
        return self._add(name, "matmul", batch + (a.shape[-2], b.shape[-1]))

    def sum(self, name, a, axis=None, keepdims=False):
        rank = len(a.shape)
        if axis is None:
            return self._add(name, "sum", (1,) * rank if keepdims else ())
        if not -rank <= axis < rank:
            raise ShapeError(f"sum {name!r}: axis {axis} is out of range for shape {a.shape}")
        axis %= rank
        shape = list(a.shape)
        if keepdims:
            shape[axis] = 1
        else:
            del shape[axis]
        return self._add(name, "sum", shape)

    def reshape(self, name, a, shape):
        shape = list(shape)
        total = 1
        for d in a.shape:
            total *= d
        if shape.count(-1) > 1:
            raise ShapeError(f"reshape {name!r}: at most one size may be -1, got {tuple(shape)}")
        known = 1
        for d in shape:
            if d != -1:
                known *= d
        if -1 in shape:
            if known == 0 or total % known:
                raise ShapeError(f"reshape {name!r}: cannot reshape {a.shape} into {tuple(shape)}")
            shape[shape.index(-1)] = total // known
        elif known != total:
            raise ShapeError(f"reshape {name!r}: cannot reshape {a.shape} ({total} elements) into {tuple(shape)}")
        return self._add(name, "reshape", shape)

    def transpose(self, name, a):
        return self._add(name, "transpose", tuple(reversed(a.shape)))
