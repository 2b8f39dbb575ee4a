"""Checks for scalar-autograd: values and gradients against the reference, shared subexpressions,
reflected operators, a 10 000-deep chain, and the speed of backward()."""
import json
import math

from grader.harness import ProgramError, Race, as_code, check, close, fail, fn, inside, localize, perf, run_in
from grader.harness.programs import RemoteAttribute

BINARY = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "truediv": lambda a, b: a / b}
UNARY = {"relu": lambda a: max(a, 0.0), "tanh": math.tanh, "exp": math.exp, "neg": lambda a: -a}
SYMBOL = {"add": "+", "sub": "-", "mul": "*", "truediv": "/"}


def call(value, method, *args, shown):
    """``value.method(*args)`` in the program; a missing operator fails with what the student wrote."""
    try:
        return RemoteAttribute(value, method)(*args)
    except ProgramError as error:
        if error.side == "student" and error.type_name == "AttributeError" and method in error.message:
            fail({"en": "{shown} is not supported: your Value has no {method}",
                  "zh-hans": "不支持 {shown}：你的 Value 没有 {method}"}, shown=shown, method=method)
        raise


def run(program, steps):
    """Build the graph ``steps`` describes with the program's Value; returns its nodes."""
    nodes = []
    for step in steps:
        kind = step[0]
        if kind == "leaf":
            nodes.append(program.Value(step[1]))
        elif kind == "binary":  # node op node
            _, op, i, j = step
            nodes.append(call(nodes[i], f"__{op}__", nodes[j], shown=f"Value {SYMBOL[op]} Value"))
        elif kind == "right":  # node op number
            _, op, i, c = step
            nodes.append(call(nodes[i], f"__{op}__", c, shown=f"Value {SYMBOL[op]} {c}"))
        elif kind == "left":  # number op node: the reflected operator
            _, op, c, i = step
            nodes.append(call(nodes[i], f"__r{op}__", c, shown=f"{c} {SYMBOL[op]} Value"))
        elif kind == "pow":
            _, i, k = step
            nodes.append(call(nodes[i], "__pow__", k, shown=f"Value ** {k}"))
        elif kind == "neg":
            nodes.append(call(nodes[step[1]], "__neg__", shown="-Value"))
        else:  # relu, tanh, exp
            nodes.append(call(nodes[step[1]], kind, shown=f"Value.{kind}()"))
    return nodes


def outcome(program, steps, watch=None):
    """Run ``steps``, call backward() on the last node; data of every node, grad of the watched ones."""
    nodes = run(program, steps)
    nodes[-1].backward()
    watch = range(len(nodes)) if watch is None else watch
    return {
        "data": [nodes[i].data.get() for i in watch],
        "grad": [nodes[i].grad.get() for i in watch],
    }


def compare(student, reference, steps, what, watch=None):
    got = outcome(student, steps, watch)
    want = outcome(reference, steps, watch)
    close(got["data"], want["data"], rtol=1e-9, atol=1e-12, what=localize({"en": "{what}: `.data`", "zh-hans": "{what}：`.data`"}, what=what))
    close(got["grad"], want["grad"], rtol=1e-7, atol=1e-10, what=localize({"en": "{what}: `.grad`", "zh-hans": "{what}：`.grad`"}, what=what))


def random_steps(rng, size, leaves=4):
    """A random expression graph whose nodes are reused many times (shared subexpressions).

    Operands are picked so every value stays finite: exp only of small values, division only
    by values away from zero, fractional powers only of positive values.
    """
    steps, values = [], []
    for _ in range(leaves):
        x = round(float(rng.normal()) * 1.5, 3)
        steps.append(("leaf", x))
        values.append(x)
    while len(steps) < size:
        n = len(values)
        recent = int(rng.integers(max(0, n - 6), n))  # mostly recent nodes: deep as well as wide
        other = int(rng.integers(0, n))
        a, b = values[recent], values[other]
        c = round(float(rng.uniform(-2, 2)), 2) or 0.5
        choice = int(rng.integers(0, 10))
        if choice < 4:
            op = ["add", "sub", "mul", "truediv"][choice]
            if op == "truediv" and abs(b) < 0.5 or op == "mul" and abs(a * b) > 50:
                op = "add"
            step, value = ("binary", op, recent, other), BINARY[op](a, b)
        elif choice == 4:
            op = str(rng.choice(["add", "sub", "mul", "truediv"]))
            if op == "truediv" and abs(c) < 0.5:
                c = 1.5
            step, value = ("right", op, recent, c), BINARY[op](a, c)
        elif choice == 5:
            op = str(rng.choice(["add", "sub", "mul", "truediv"]))
            if op == "truediv" and abs(a) < 0.5:
                op = "mul"
            step, value = ("left", op, c, recent), BINARY[op](c, a)
        elif choice == 6:
            k = [2, 3, -1, 0.5][int(rng.integers(0, 4))]
            if k == 0.5 and a <= 0.1 or k == -1 and abs(a) < 0.5 or abs(a) > 4:
                k = 2 if abs(a) <= 4 else 1
            step, value = ("pow", recent, k), a ** k
        else:
            fn = ["relu", "tanh", "exp", "neg"][choice - 7 + int(rng.integers(0, 2))]
            if fn == "exp" and a > 3:
                fn = "tanh"
            step, value = (fn, recent) if fn != "neg" else ("neg", recent), UNARY[fn](a)
        if not math.isfinite(value) or abs(value) > 1e6:
            step, value = ("tanh", recent), math.tanh(a)
        steps.append(step)
        values.append(value)
    # The output mixes several recent nodes, so almost every node reaches it.
    last = len(steps) - 1
    for i in range(max(0, last - 3), last):
        steps.append(("binary", "add", len(steps) - 1, i))
    return steps


# a = 2, b = -3: c = a * b + b ** 2, d = (c * a).tanh() + c.relu() - a / b
SMALL = [
    ("leaf", 2.0), ("leaf", -3.0),
    ("binary", "mul", 0, 1), ("pow", 1, 2), ("binary", "add", 2, 3),    # 4: c = a*b + b**2 = 3
    ("binary", "mul", 4, 0), ("right", "mul", 5, 0.1), ("tanh", 6),     # 7: tanh(0.1 * c * a)
    ("relu", 4), ("binary", "add", 7, 8),                                 # 9
    ("binary", "truediv", 0, 1), ("binary", "sub", 9, 10),               # 11: d
]


@check(points=2, title={"en": "Gradients of a small expression", "zh-hans": "小表达式的梯度"})
def gradients_of_a_small_expression(student, reference, rng):
    compare(student, reference, SMALL, {
        "en": "`d = tanh(0.1*c*a) + relu(c) - a/b` with `c = a*b + b**2`, `a=2`, `b=-3`",
        "zh-hans": "`d = tanh(0.1*c*a) + relu(c) - a/b`，其中 `c = a*b + b**2`，`a=2`，`b=-3`"})


@check(points=1, title={"en": "A node used twice gets both gradients", "zh-hans": "被用了两次的节点得到两份梯度"})
def a_node_used_twice_gets_both_gradients(student, reference, rng):
    # y = x * x + x: dy/dx = 2x + 1. Overwriting instead of adding gives x, 1 or 2x.
    steps = [("leaf", 3.0), ("binary", "mul", 0, 0), ("binary", "add", 1, 0)]
    compare(student, reference, steps, {"en": "y = x * x + x at x = 3", "zh-hans": "x = 3 时的 y = x * x + x"}, watch=[0, 2])


@check(points=1, title={"en": "Operators with plain numbers", "zh-hans": "与普通数字混合的运算符"})
def operators_with_plain_numbers(student, reference, rng):
    for op in ("add", "sub", "mul", "truediv"):
        compare(student, reference, [("leaf", 4.0), ("right", op, 0, 2.0)], as_code(f"Value(4.0) {SYMBOL[op]} 2"))
        compare(student, reference, [("leaf", 4.0), ("left", op, 2.0, 0)], as_code(f"2 {SYMBOL[op]} Value(4.0)"))
    compare(student, reference, [("leaf", 4.0), ("neg", 0)], as_code("-Value(4.0)"))


@check(points=1, title={"en": "Powers, relu, tanh and exp", "zh-hans": "幂、relu、tanh 与 exp"})
def powers_relu_tanh_exp(student, reference, rng):
    for k in (2, 3, -1, 0.5):
        compare(student, reference, [("leaf", 1.7), ("pow", 0, k)], as_code(f"Value(1.7) ** {k}"))
    for x in (-0.8, 0.6):
        for fn in ("relu", "tanh", "exp"):
            compare(student, reference, [("leaf", x), (fn, 0)], as_code(f"Value({x}).{fn}()"))


@check(points=1, title={"en": "A fresh value has a zero gradient", "zh-hans": "新建的值梯度为零"})
def a_fresh_value_has_zero_grad(student, reference, rng):
    x = student.Value(1.25)
    close(x.grad.get(), 0.0, what={"en": "`Value(1.25).grad` before any `backward()`",
                                     "zh-hans": "尚未调用 `backward()` 时的 `Value(1.25).grad`"})
    close(x.data.get(), 1.25, what=as_code("Value(1.25).data"))


@check(points=3, title={"en": "Random graphs with shared subexpressions", "zh-hans": "含公共子表达式的随机图"})
def random_graphs_with_shared_subexpressions(student, reference, rng):
    for size in (12, 40, 120):
        compare(student, reference, random_steps(rng, size), localize(
            {"en": "a random graph of {size} nodes", "zh-hans": "有 {size} 个节点的随机计算图"}, size=size))


@check(points=2, title={"en": "A chain ten thousand nodes deep", "zh-hans": "一万个节点深的链"})
def a_chain_ten_thousand_nodes_deep(student, reference, rng):
    # x -> tanh(x) * 0.9 + c -> ... 10 000 nodes: a recursive topological sort overflows the stack.
    c = round(float(rng.uniform(0.05, 0.2)), 3)
    steps = [("leaf", round(float(rng.normal()), 3))]
    while len(steps) < 10_000:
        n = len(steps) - 1
        steps += [("tanh", n), ("right", "mul", n + 1, 0.9), ("right", "add", n + 2, c)]
    compare(student, reference, steps, {"en": "a chain of 10 000 nodes", "zh-hans": "由 10 000 个节点组成的链"}, watch=[0, len(steps) // 2, len(steps) - 1])


# Runs inside a program: builds the graph ``steps`` describes with that program's Value, in
# one call (node by node over the channel would take minutes), and returns the output node
# and the leaves, as handles.
BUILD = fn('''def build(module, steps, leaves):
    import json, operator
    steps = json.loads(steps)  # one string on the wire: 6 000 tuples would cost more than the race
    ops = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv}
    nodes = []
    for step in steps:
        kind = step[0]
        if kind == "leaf":
            nodes.append(module.Value(step[1]))
        elif kind == "binary":
            nodes.append(ops[step[1]](nodes[step[2]], nodes[step[3]]))
        elif kind == "right":
            nodes.append(ops[step[1]](nodes[step[2]], step[3]))
        elif kind == "left":
            nodes.append(ops[step[1]](step[2], nodes[step[3]]))
        elif kind == "pow":
            nodes.append(nodes[step[1]] ** step[2])
        elif kind == "neg":
            nodes.append(-nodes[step[1]])
        else:
            nodes.append(getattr(nodes[step[1]], kind)())
    return nodes[-1], nodes[:leaves]
''')
# What is timed: one backward() on a graph no call has seen, and the leaves' gradients it gave.
BACKWARD = fn("lambda output, leaves: (output.backward(), [leaf.grad for leaf in leaves])[1]")
LEAVES = 20
# Large enough that a quadratic backward() is several times the reference even though the
# graph's construction (linear, the same work for both) is timed with it.
NODES = 6000


@perf(points=2, title={"en": "backward() on a large graph (speed)", "zh-hans": "在大图上运行 backward()（速度）"})
def backward_on_a_large_graph(student, reference, rng):
    # Every timed call gets a fresh random graph (built untimed by ``setup``) and its
    # gradients are compared: a backward() that remembers an earlier call has nothing to reuse.
    return Race(
        student=inside(student, BACKWARD),
        reference=inside(reference, BACKWARD),
        inputs=lambda rng: (json.dumps(random_steps(rng, NODES, leaves=LEAVES)), LEAVES),
        setup=lambda program, args: run_in(program, BUILD, program, *args),
        check=lambda got, want: close(got, want, rtol=1e-7, atol=1e-10, what={
            "en": "the leaves' `.grad` after a timed `backward()`", "zh-hans": "一次计时的 `backward()` 之后叶子节点的 `.grad`"}),
    )
