"""Checks for broadcast-autograd: values and leaf gradients against the reference, with broadcasting everywhere."""
import numpy as np

from grader.harness import ProgramError, as_code, check, close, fail, fn, localize, run_in
from grader.harness.programs import RemoteAttribute

SYMBOL = {"add": "+", "sub": "-", "mul": "*", "matmul": "@"}


def call(value, method, *args, shown):
    try:
        return RemoteAttribute(value, method)(*args)
    except ProgramError as error:
        if error.side == "student" and error.type_name == "AttributeError" and method in error.message:
            fail({"en": "{shown} is not supported: your Tensor has no {method}",
                  "zh-hans": "不支持 {shown}：你的 Tensor 没有 {method}"}, shown=shown, method=method)
        raise


def run(program, steps):
    nodes = []
    for step in steps:
        kind = step[0]
        if kind == "leaf":
            nodes.append(program.Tensor(step[1]))
        elif kind == "binary":
            _, op, i, j = step
            nodes.append(call(nodes[i], f"__{op}__", nodes[j], shown=f"Tensor {SYMBOL[op]} Tensor"))
        elif kind == "number":
            _, op, i, c = step
            nodes.append(call(nodes[i], f"__{op}__", c, shown=f"Tensor {SYMBOL[op]} {c}"))
        elif kind == "rnumber":
            _, op, c, i = step
            nodes.append(call(nodes[i], f"__r{op}__", c, shown=f"{c} {SYMBOL[op]} Tensor"))
        elif kind == "sum":
            _, i, axis = step
            nodes.append(call(nodes[i], "sum", axis, shown=f"Tensor.sum({axis})"))
        else:
            nodes.append(call(nodes[step[1]], kind, shown=f"Tensor.{kind}()"))
    return nodes


def compare(student, reference, steps, what):
    leaves = [i for i, s in enumerate(steps) if s[0] == "leaf"]
    results = []
    for program in (student, reference):
        nodes = run(program, steps)
        nodes[-1].backward()
        results.append(([nodes[i].data.get() for i in (len(nodes) - 1,)], [nodes[i].grad.get() for i in leaves]))
    (got_out, got_grads), (want_out, want_grads) = results
    close(got_out, want_out, what=localize({"en": "{what}: the output's `.data`", "zh-hans": "{what}：输出的 `.data`"}, what=what))
    for leaf, got, want in zip(leaves, got_grads, want_grads):
        shape = np.shape(steps[leaf][1])
        close(got, want, what=localize(
            {"en": "{what}: `.grad` of the input of shape {shape}", "zh-hans": "{what}：形状为 {shape} 的输入的 `.grad`"},
            what=what, shape=shape))


def leaf(rng, shape):
    return ("leaf", np.round(rng.normal(size=shape), 3))


# loss = sum(tanh(x @ w + b) * scale): b (3,) and scale (4, 1) are broadcast.
LAYER = [
    ("leaf", np.array([[0.5, -1.0], [1.5, 0.2], [-0.3, 0.8], [1.0, 1.0]])),    # 0: x (4, 2)
    ("leaf", np.array([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]])),                 # 1: w (2, 3)
    ("leaf", np.array([0.01, -0.02, 0.03])),                                   # 2: b (3,)
    ("leaf", np.array([[1.0], [2.0], [0.5], [-1.0]])),                         # 3: scale (4, 1)
    ("binary", "matmul", 0, 1), ("binary", "add", 4, 2), ("tanh", 5),          # 6
    ("binary", "mul", 6, 3), ("sum", 7, None),                                 # 8
]


@check(points=2, title={"en": "A layer whose bias is broadcast", "zh-hans": "偏置被广播的一层网络"})
def a_layer_with_a_broadcast_bias(student, reference, rng):
    compare(student, reference, LAYER, as_code("sum(tanh(x @ w + b) * scale)"))


@check(points=1, title={"en": "A size-1 axis is summed back in the gradient", "zh-hans": "长度为 1 的轴在梯度中被求和还原"})
def a_size_one_axis_is_summed_back(student, reference, rng):
    steps = [leaf(rng, (3, 1)), leaf(rng, (1, 4)), ("binary", "mul", 0, 1), ("sum", 2, None)]
    compare(student, reference, steps, {"en": "`sum(a * b)` with a (3, 1) and b (1, 4)",
                                         "zh-hans": "`sum(a * b)`，其中 a 的形状为 (3, 1)，b 的形状为 (1, 4)"})


@check(points=1, title={"en": "A scalar tensor broadcast everywhere", "zh-hans": "标量张量被广播到所有位置"})
def a_scalar_tensor_is_broadcast_everywhere(student, reference, rng):
    steps = [leaf(rng, ()), leaf(rng, (2, 3)), ("binary", "add", 1, 0), ("exp", 2), ("sum", 3, None)]
    compare(student, reference, steps, {"en": "`sum(exp(x + s))` with s of shape ()",
                                         "zh-hans": "`sum(exp(x + s))`，其中 s 的形状为 ()"})


@check(points=1, title={"en": "Plain numbers on either side of an operator", "zh-hans": "运算符两侧出现普通数字"})
def numbers_on_both_sides(student, reference, rng):
    steps = [leaf(rng, (3,)), ("number", "mul", 0, 2.0), ("rnumber", "sub", 1.0, 1), ("rnumber", "mul", 3.0, 2),
             ("number", "add", 3, 0.5), ("sum", 4, None)]
    compare(student, reference, steps, as_code("sum(3 * (1 - x * 2) + 0.5)"))


@check(points=1, title={"en": "Sum over one axis", "zh-hans": "沿一个轴求和"})
def sum_over_one_axis(student, reference, rng):
    steps = [leaf(rng, (4, 5)), ("sum", 0, 1), ("tanh", 1), ("sum", 2, None)]
    compare(student, reference, steps, as_code("sum(tanh(x.sum(axis=1)))"))


@check(points=1, title={"en": "A tensor used twice gets both gradients", "zh-hans": "被用了两次的张量得到两份梯度"})
def a_tensor_used_twice(student, reference, rng):
    steps = [leaf(rng, (2, 2)), leaf(rng, (2,)), ("binary", "mul", 0, 0), ("binary", "add", 2, 1), ("binary", "mul", 3, 1),
             ("sum", 4, None)]
    compare(student, reference, steps, as_code("sum((x * x + v) * v)"))


def random_steps(rng):
    """Random broadcasting expressions over leaves of shapes drawn around one full shape."""
    full = tuple(int(d) for d in rng.integers(2, 5, size=int(rng.integers(1, 4))))
    steps, shapes = [], []

    def add_leaf():
        rank = int(rng.integers(0, len(full) + 1))
        shape = tuple(1 if rng.random() < 0.3 else d for d in full[len(full) - rank:])
        steps.append(leaf(rng, shape))
        shapes.append(shape)

    for _ in range(3):
        add_leaf()
    current = 0
    for _ in range(int(rng.integers(4, 10))):
        roll = rng.random()
        if roll < 0.5:
            add_leaf()
            other = len(steps) - 1
            op = str(rng.choice(["add", "sub", "mul"]))
            steps.append(("binary", op, current, other))
            shapes.append(np.broadcast_shapes(shapes[current], shapes[other]))
        elif roll < 0.65:
            c = round(float(rng.uniform(-2, 2)), 2)
            steps.append(("number", "mul", current, c) if rng.random() < 0.5 else ("rnumber", "sub", c, current))
            shapes.append(shapes[current])
        else:
            steps.append((str(rng.choice(["tanh", "exp"])) if rng.random() < 0.7 else "tanh", current))
            if steps[-1][0] == "exp":
                steps[-1] = ("tanh", current)  # keep values small before exp
                shapes.append(shapes[current])
                steps.append(("exp", len(steps) - 1))
            shapes.append(shapes[current])
        current = len(steps) - 1
        if rng.random() < 0.3 and steps[current][0] == "binary":  # reuse: the result feeds itself
            steps.append(("binary", "mul", current, current))
            shapes.append(shapes[current])
            current = len(steps) - 1
    steps.append(("sum", current, None))
    return steps


@check(points=3, title={"en": "Random broadcasting expressions", "zh-hans": "随机的广播表达式"})
def random_broadcasting_expressions(student, reference, rng):
    for _ in range(6):
        compare(student, reference, random_steps(rng), {"en": "a random broadcasting expression",
                                                        "zh-hans": "一个随机的广播表达式"})


# A chain of 2 * n ops built and differentiated inside the program (one call, not one per op).
CHAIN = fn(
    "lambda n: (lambda sys: (lambda T: (lambda x, b: (lambda y: (y.backward(), [y.data, x.grad, b.grad])[1])("
    "__import__('functools').reduce(lambda acc, _: acc * 0.999 + b, range(n), x).sum()))"
    "(T(np.ones((2, 3))), T(np.full(3, 0.001))))((sys.modules.get('submission') or sys.modules['solution']).Tensor))"
    "(__import__('sys'))"
)


@check(points=1, title={"en": "A chain of 3000 ops", "zh-hans": "3000 个运算组成的链"})
def a_chain_of_3000_ops(student, reference, rng):
    close(run_in(student, CHAIN, 1500), run_in(reference, CHAIN, 1500),
          what={"en": "`(value, x.grad, b.grad)` after 1500 steps of `y = y * 0.999 + b`",
                "zh-hans": "执行 1500 步 `y = y * 0.999 + b` 之后的 `(value, x.grad, b.grad)`"})
