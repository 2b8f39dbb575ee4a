class ShapeError(ValueError):
    pass


class Node:
    def __init__(self, name, op, shape):
        self.name = name
        self.op = op
        self.shape = tuple(shape)


class Graph:
    """Build a graph op by op; every op must know its output shape, or refuse, the moment it is defined."""

    def __init__(self):
        self.nodes = {}

    def _add(self, name, op, shape):
        node = Node(name, op, shape)
        self.nodes[name] = node
        return node

    def input(self, name, shape):
        return self._add(name, "input", shape)

    def add(self, name, a, b):
        return self._add(name, "add", a.shape)  # TODO: broadcasting, and refusing shapes that do not broadcast

    def mul(self, name, a, b):
        return self._add(name, "mul", a.shape)  # TODO

    def matmul(self, name, a, b):
        return self._add(name, "matmul", a.shape[:-1] + b.shape[-1:])  # TODO: check inner sizes, batch dims

    def sum(self, name, a, axis=None, keepdims=False):
        return self._add(name, "sum", ())  # TODO

    def reshape(self, name, a, shape):
        return self._add(name, "reshape", shape)  # TODO: -1, and refusing a different element count

    def transpose(self, name, a):
        return self._add(name, "transpose", tuple(reversed(a.shape)))
