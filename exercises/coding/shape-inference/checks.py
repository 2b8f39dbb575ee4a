"""Checks for shape-inference: output shapes as numpy computes them, and errors raised where the op is defined."""
import numpy as np

from grader.harness import as_code, check, equal, fail, localize, raises


def shape_of(node, what):
    shape = node.shape.get()
    if not isinstance(shape, tuple) or not all(isinstance(d, int) for d in shape):
        fail({"en": "{what}: `.shape` must be a tuple of ints, got `{shape!r}`",
              "zh-hans": "{what}：`.shape` 必须是由 int 组成的 tuple，实际为 `{shape!r}`"}, what=what, shape=shape)
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


def described(op, shapes, kwargs):
    """ "matmul of (8, 3), (4, 2) with {'axis': 0}", in every language."""
    if kwargs:
        return localize({"en": "{op} of {shapes} with {kwargs}", "zh-hans": "{op}，输入形状 {shapes}，参数 {kwargs}"},
                        op=op, shapes=shapes, kwargs=kwargs)
    return localize({"en": "{op} of {shapes}", "zh-hans": "{op}，输入形状 {shapes}"}, op=op, shapes=shapes)


def agrees(student, op, shapes, **kwargs):
    what = described(op, ", ".join(map(str, shapes)), kwargs)
    _, node = build(student, op, shapes, **kwargs)
    equal(shape_of(node, what), tuple(numpy_shape(op, shapes, **kwargs)), what=what)


def refuses(student, op, shapes, name, **kwargs):
    what = described(f"{op} {name!r}", ", ".join(map(str, shapes)), kwargs)
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
    equal(shape_of(h, as_code("h = x @ w")), (32, 10), what={
        "en": "h = x @ w with x (32, 784), w (784, 10)", "zh-hans": "h = x @ w，其中 x 为 (32, 784)，w 为 (784, 10)"})
    equal(shape_of(y, as_code("y = h + b")), (32, 10), what={"en": "y = h + b with b (10,)", "zh-hans": "y = h + b，其中 b 为 (10,)"})


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
    with raises("h2", "(3, 4)", "(5,)", what={"en": "add `'h2'` of (3, 4) and (5,)", "zh-hans": "对 (3, 4) 与 (5,) 的 add `'h2'`"}):
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
    with raises("bad", what={"en": "matmul `'bad'` of (8, 3) and (4, 2)", "zh-hans": "对 (8, 3) 与 (4, 2) 的 matmul `'bad'`"}):
        g.matmul("bad", x, w)
    v = g.input("v", (3, 2))
    equal(shape_of(g.matmul("good", x, v), as_code("good")), (8, 2), what={
        "en": "a matmul defined after a refused one", "zh-hans": "在一个被拒绝的 matmul 之后定义的 matmul"})


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
