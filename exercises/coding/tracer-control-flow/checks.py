"""Checks for tracer-control-flow: replay on new inputs, the recorded ops, and refusing data-dependent branches."""
from grader.harness import as_code, check, close, equal, fn, localize, raises

AFFINE = "lambda x, w, b: x @ w + b"
UNROLLED = "lambda x: __import__('functools').reduce(lambda acc, _: acc * 0.5 + 1.0, range(3), x)"
MASKED_RELU = "lambda x: x * (x > 0)"
CONSTANT_BRANCH = "lambda x, k=3: x * k if k > 2 else -x"
REFLECTED = "lambda x: (2.0 - x) / (1.0 + x * x) + 3.0 * x ** 2"


def arrays(rng, *shapes):
    return [rng.normal(size=shape) for shape in shapes]


def compare(student, reference, source, shapes, rng, what, runs=2):
    mine = student.trace(fn(source), len(shapes))
    theirs = reference.trace(fn(source), len(shapes))
    equal(list(mine.ops.get()), list(theirs.ops.get()), what=localize({"en": "{what}: the recorded ops", "zh-hans": "{what}：记录下的运算"}, what=what))
    for _ in range(runs):
        inputs = arrays(rng, *shapes)
        close(mine.run(*inputs), fn(source)(*inputs), what=localize(
            {"en": "{what}: `run()` on new inputs", "zh-hans": "{what}：用新输入调用 `run()`"}, what=what))


@check(points=1, title={"en": "Traces an affine layer", "zh-hans": "追踪一个仿射层"})
def traces_an_affine_layer(student, reference, rng):
    compare(student, reference, AFFINE, [(4, 3), (3, 2), (2,)], rng, as_code(AFFINE))


@check(points=1, title={"en": "A Python loop is unrolled", "zh-hans": "Python 循环被展开"})
def a_python_loop_is_unrolled(student, reference, rng):
    compare(student, reference, UNROLLED, [(5,)], rng, {
        "en": "three rounds of x = x * 0.5 + 1.0 in a Python loop", "zh-hans": "在 Python 循环中执行三轮 x = x * 0.5 + 1.0"})


@check(points=1, title={"en": "A mask replaces a branch", "zh-hans": "用掩码代替分支"})
def a_mask_replaces_a_branch(student, reference, rng):
    compare(student, reference, MASKED_RELU, [(6,)], rng, as_code(MASKED_RELU))


@check(points=1, title={"en": "Plain numbers on the left of an operator", "zh-hans": "运算符左侧的普通数字"})
def numbers_on_the_left(student, reference, rng):
    compare(student, reference, REFLECTED, [(5,)], rng, as_code(REFLECTED))


@check(points=1, title={"en": "A branch on a plain number is fine", "zh-hans": "对普通数字分支没有问题"})
def a_branch_on_a_plain_number_is_fine(student, reference, rng):
    compare(student, reference, CONSTANT_BRANCH, [(3,)], rng, as_code(CONSTANT_BRANCH))


@check(points=2, title={"en": "Refuses if on a traced value", "zh-hans": "拒绝对被追踪的值使用 if"})
def refuses_if_on_a_traced_value(student, reference, rng):
    with raises("data-dependent", what=as_code("trace(lambda x: x * 2 if x > 0 else -x, 1)")):
        student.trace(fn("lambda x: x * 2 if x > 0 else -x"), 1)


@check(points=1, title={"en": "Refuses float() of a traced value", "zh-hans": "拒绝对被追踪的值调用 float()"})
def refuses_float_of_a_traced_value(student, reference, rng):
    with raises("data-dependent", what=as_code("trace(lambda x: x * float(x), 1)")):
        student.trace(fn("lambda x: x * float(x)"), 1)


@check(points=1, title={"en": "Refuses the built-in max()", "zh-hans": "拒绝内置的 max()"})
def refuses_builtin_max(student, reference, rng):
    # max() compares, then asks the comparison for a bool: a branch in disguise.
    with raises("data-dependent", what=as_code("trace(lambda x, y: max(x, y), 2)")):
        student.trace(fn("lambda x, y: max(x, y)"), 2)


@check(points=1, title={"en": "Refuses a loop that depends on data", "zh-hans": "拒绝依赖数据的循环"})
def refuses_a_loop_that_depends_on_data(student, reference, rng):
    source = "lambda x: next(i for i in range(10) if (x * i) > 3)"
    with raises("data-dependent", what={"en": "a loop that stops when x * i > 3", "zh-hans": "在 x * i > 3 时停止的循环"}):
        student.trace(fn(source), 1)


def random_expression(rng, names, depth):
    if depth == 0 or rng.random() < 0.2:
        if rng.random() < 0.25:
            return repr(round(float(rng.uniform(0.5, 2.0)), 2))
        return str(rng.choice(names))
    roll = int(rng.integers(0, 7))
    a = random_expression(rng, names, depth - 1)
    b = random_expression(rng, names, depth - 1)
    if roll == 0:
        return f"({a} + {b})"
    if roll == 1:
        return f"({a} - {b})"
    if roll == 2:
        return f"({a} * {b})"
    if roll == 3:
        return f"({a} / (1.5 + {b} * {b}))"
    if roll == 4:
        return f"(-{a})"
    if roll == 5:
        return f"({a} * ({b} > 0.3))"
    return f"({a} ** 2)"


@check(points=3, title={"en": "Random expressions", "zh-hans": "随机表达式"})
def random_expressions(student, reference, rng):
    for _ in range(6):
        body = random_expression(rng, ["x", "y"], 4)
        if "x" not in body:
            body = f"({body} + x)"
        if "y" not in body:
            body = f"({body} * y)"
        compare(student, reference, f"lambda x, y: {body}", [(4,), (4,)], rng,
                {"en": "a random expression", "zh-hans": "一个随机表达式"}, runs=2)
