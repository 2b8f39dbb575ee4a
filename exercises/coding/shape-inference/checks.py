"""Checks for shape-inference: output shapes as numpy computes them, and errors raised where the op is defined."""
import numpy as np

from grader.harness import check, equal, fail, raises


def shape_of(node, what):
    shape = node.shape.get()
    if not isinstance(shape, tuple) or not all(isinstance(d, int) for d in shape):
        fail(f"{what}: .shape must be a tuple of ints, got {shape!r}")
    return shape


def numpy_shape(op, shapes, **kwargs):
    """What numpy itself says, on zero-filled arrays of these shapes (or the error it raises)."""
    arrays = [np.zeros(s) for s in shapes]
    if op == "add":
        return (arrays[0] + arrays[1]).shape
    if op == "mul":
        return (arrays[0] * arrays[1]).shape
    if op == "matmul":
        return (arrays[0] @ arrays[1]).shape
    if op == "sum":
        return np.sum(arrays[0], **kwargs).shape
    if op == "reshape":
        return arrays[0].reshape(kwargs["shape"]).shape
    return arrays[0].T.shape


def build(program, op, shapes, name="out", **kwargs):
    g = program.Graph()
    nodes = [g.input(f"in{i}", s) for i, s in enumerate(shapes)]
    if op == "sum":
        return g, g.sum(name, nodes[0], kwargs.get("axis"), kwargs.get("keepdims", False))
    if op == "reshape":
        return g, g.reshape(name, nodes[0], kwargs["shape"])
    if op == "transpose":
        return g, g.transpose(name, nodes[0])
    return g, getattr(g, op)(name, *nodes)


def agrees(student, op, shapes, **kwargs):
    what = f"{op} of {', '.join(map(str, shapes))}" + (f" with {kwargs}" if kwargs else "")
    _, node = build(student, op, shapes, **kwargs)
    equal(shape_of(node, what), tuple(numpy_shape(op, shapes, **kwargs)), what=what)


def refuses(student, op, shapes, name, **kwargs):
    what = f"{op} {name!r} of {', '.join(map(str, shapes))}" + (f" with {kwargs}" if kwargs else "")
    g = student.Graph()
    nodes = [g.input(f"in{i}", s) for i, s in enumerate(shapes)]
    with raises(name, what=what):
        if op == "sum":
            g.sum(name, nodes[0], kwargs.get("axis"), kwargs.get("keepdims", False))
        elif op == "reshape":
            g.reshape(name, nodes[0], kwargs["shape"])
        else:
            getattr(g, op)(name, *nodes)


@check(points=1, title={"en": "An MLP layer", "zh-hans": "一层 MLP"})
def an_mlp_layer(student, reference, rng):
    g = student.Graph()
    x = g.input("x", (32, 784))
    w = g.input("w", (784, 10))
    b = g.input("b", (10,))
    h = g.matmul("h", x, w)
    y = g.add("y", h, b)
    equal(shape_of(h, "h = x @ w"), (32, 10), what="h = x @ w with x (32, 784), w (784, 10)")
    equal(shape_of(y, "y = h + b"), (32, 10), what="y = h + b with b (10,)")


@check(points=1, title={"en": "Broadcasting follows numpy's rules", "zh-hans": "广播遵循 numpy 的规则"})
def broadcasting_follows_numpy(student, reference, rng):
    for a, b in (((3, 1), (1, 4)), ((5, 4), (4,)), ((2, 1, 3), (7, 1)), ((), (2, 2))):
        agrees(student, "add", [a, b])
        agrees(student, "mul", [a, b])


@check(points=1, title={"en": "Sums, reshapes and transposes", "zh-hans": "求和、变形与转置"})
def sums_reshapes_and_transposes(student, reference, rng):
    agrees(student, "sum", [(4, 5, 6)])
    agrees(student, "sum", [(4, 5, 6)], axis=1)
    agrees(student, "sum", [(4, 5, 6)], axis=-1, keepdims=True)
    agrees(student, "reshape", [(4, 6)], shape=(3, -1))
    agrees(student, "reshape", [(2, 3, 4)], shape=(24,))
    agrees(student, "transpose", [(2, 3, 4)])


@check(points=2, title={"en": "A bad matmul fails where it is defined", "zh-hans": "错误的 matmul 在定义处报错"})
def a_bad_matmul_fails_where_it_is_defined(student, reference, rng):
    refuses(student, "matmul", [(32, 784), (10, 784)], "logits")


@check(points=1, title={"en": "The error names both shapes", "zh-hans": "报错信息写出两边的形状"})
def the_error_names_both_shapes(student, reference, rng):
    g = student.Graph()
    a, b = g.input("a", (3, 4)), g.input("b", (5,))
    with raises("h2", "(3, 4)", "(5,)", what="add 'h2' of (3, 4) and (5,)"):
        g.add("h2", a, b)


@check(points=1, title={"en": "More shapes that must be refused", "zh-hans": "更多应当拒绝的形状"})
def more_refusals(student, reference, rng):
    refuses(student, "reshape", [(4, 6)], "flat", shape=(5, -1))
    refuses(student, "reshape", [(4, 6)], "flat2", shape=(5, 5))
    refuses(student, "sum", [(4, 6)], "total", axis=2)
    refuses(student, "mul", [(2, 3), (3, 2)], "scaled")


@check(points=1, title={"en": "The graph stays usable after an error", "zh-hans": "出错之后图仍然可用"})
def the_graph_stays_usable_after_an_error(student, reference, rng):
    g = student.Graph()
    x, w = g.input("x", (8, 3)), g.input("w", (4, 2))
    with raises("bad", what="matmul 'bad' of (8, 3) and (4, 2)"):
        g.matmul("bad", x, w)
    v = g.input("v", (3, 2))
    equal(shape_of(g.matmul("good", x, v), "good"), (8, 2), what="a matmul defined after a refused one")


def random_shape(rng, rank):
    return tuple(int(d) for d in rng.integers(1, 5, size=rank))


def broadcastable_pair(rng):
    """Two suffixes of one shape, some sizes replaced by 1: always broadcastable."""
    full = random_shape(rng, int(rng.integers(1, 5)))

    def part():
        suffix = full[len(full) - int(rng.integers(0, len(full) + 1)):]
        return tuple(1 if rng.random() < 0.3 else d for d in suffix)

    return part(), part()


@check(points=3, title={"en": "Random valid ops", "zh-hans": "随机的合法算子"})
def random_valid_ops(student, reference, rng):
    for _ in range(12):
        a, b = broadcastable_pair(rng)
        agrees(student, str(rng.choice(["add", "mul"])), [a, b])
    for _ in range(6):
        batch = random_shape(rng, int(rng.integers(0, 3)))
        n, k, m = (int(v) for v in rng.integers(1, 6, size=3))
        short = batch[int(rng.integers(0, len(batch) + 1)):]
        agrees(student, "matmul", [batch + (n, k), short + (k, m)])
    for _ in range(6):
        shape = random_shape(rng, int(rng.integers(1, 4)))
        axis = int(rng.integers(-len(shape), len(shape)))
        agrees(student, "sum", [shape], axis=axis, keepdims=bool(rng.random() < 0.5))
        target = list(np.zeros(shape).reshape(-1, *shape[1:][::-1]).shape)
        target[int(rng.integers(0, len(target)))] = -1
        agrees(student, "reshape", [shape], shape=tuple(target))


@check(points=2, title={"en": "Random refusals", "zh-hans": "随机的非法算子"})
def random_refusals(student, reference, rng):
    for i in range(8):
        n, k, m = (int(v) for v in rng.integers(2, 6, size=3))
        refuses(student, "matmul", [(n, k), (k + 1, m)], f"mm{i}")
        a = random_shape(rng, 2)
        refuses(student, "add", [a + (3,), a + (2,)], f"sum{i}")
