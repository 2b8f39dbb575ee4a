"""Checks for static-graph-executor: ordering, cycles, sealing after build, missing inputs."""
from grader.harness import Race, as_code, check, close, fn, localize, perf, raises

# The article's example: a one-neuron perceptron, wx = w * x, z = wx + b, pred = step(z).
PERCEPTRON = [
    ("wx", "lambda w, x: w * x", ["w", "x"]),
    ("z", "lambda wx, b: wx + b", ["wx", "b"]),
    ("pred", "lambda z: 1 if z >= 0 else 0", ["z"]),
]
FEED = {"w": 2, "x": 5, "b": -2}

# Op bodies for random graphs, by number of inputs. Bounded so values stay finite.
BODIES = {
    0: ["lambda: 1.5", "lambda: -0.25"],
    1: ["lambda a: a * 0.5 + 1.0", "lambda a: -a", "lambda a: math.tanh(a)", "lambda a: abs(a) - 1.0"],
    2: ["lambda a, b: a + b", "lambda a, b: a * b * 0.5", "lambda a, b: max(a, b)", "lambda a, b: a - 0.5 * b"],
    3: ["lambda a, b, c: (a + b + c) / 3.0", "lambda a, b, c: a * 0.25 + b - c * 0.5"],
}


def build_graph(program, ops):
    graph = program.StaticGraph()
    for name, body, deps in ops:
        graph.add_op(name, fn(body), deps)
    return graph


def both(student, reference, ops, feed):
    """Execute the same graph in both programs; return (got, want)."""
    return build_graph(student, ops).execute(feed), build_graph(reference, ops).execute(feed)


def random_graph(rng, size, inputs=("x0", "x1", "x2")):
    """A random DAG of ``size`` ops over some fed inputs, returned in shuffled order."""
    ops, names = [], list(inputs)
    for i in range(size):
        arity = int(rng.integers(0, 4)) if i else 1
        deps = [str(rng.choice(names)) for _ in range(arity)]
        bodies = BODIES[arity]
        name = f"v{i}"
        ops.append((name, bodies[int(rng.integers(len(bodies)))], deps))
        names.append(name)
    order = rng.permutation(len(ops))
    return [ops[i] for i in order]


def random_feed(rng, inputs=("x0", "x1", "x2")):
    return {name: float(rng.normal()) for name in inputs}


@check(points=1, title={"en": "Runs the article's perceptron example", "zh-hans": "运行文章里的感知机例子"})
def runs_the_article_example(student, reference, rng):
    got, want = both(student, reference, PERCEPTRON, FEED)
    close(got, want, what=as_code("execute({'w': 2, 'x': 5, 'b': -2})"))


@check(points=2, title={"en": "Follows dependencies, not the order ops were added", "zh-hans": "按依赖关系执行，而不是按添加顺序"})
def follows_dependencies_not_insertion_order(student, reference, rng):
    ops = list(reversed(PERCEPTRON))  # pred first, wx last
    graph = build_graph(student, ops)
    graph.build()
    close(graph.execute(FEED), build_graph(reference, ops).execute(FEED), what={
        "en": "`execute()` of ops added as `pred`, `z`, `wx`", "zh-hans": "按 `pred`、`z`、`wx` 顺序添加运算后的 `execute()`"})


@check(points=1, title={"en": "execute() builds the graph when build() was not called", "zh-hans": "未调用 build() 时 execute() 会先构建图"})
def execute_builds_the_graph_if_needed(student, reference, rng):
    ops = list(reversed(PERCEPTRON))
    got, want = both(student, reference, ops, FEED)
    close(got, want, what={"en": "`execute()` without a `build()` first", "zh-hans": "没有先调用 `build()` 的 `execute()`"})


@check(points=1, title={"en": "Refuses a graph with a cycle", "zh-hans": "拒绝带环的图"})
def rejects_a_cycle(student, reference, rng):
    graph = build_graph(student, [("a", "lambda b: b + 1", ["b"]), ("b", "lambda a: a * 2", ["a"])])
    with raises("cycle", what={
            "en": "`build()` of a graph where `a` needs `b` and `b` needs `a`", "zh-hans": "对 `a` 依赖 `b`、`b` 又依赖 `a` 的计算图调用 `build()`"}):
        graph.build()


@check(points=1, title={"en": "add_op() after build() is refused", "zh-hans": "build() 之后再 add_op() 会被拒绝"})
def add_op_after_build_fails(student, reference, rng):
    graph = build_graph(student, PERCEPTRON)
    graph.build()
    with raises(what={"en": "`add_op()` after `build()`", "zh-hans": "`build()` 之后的 `add_op()`"}):
        graph.add_op("late", fn("lambda pred: pred + 1"), ["pred"])


@check(points=1, title={"en": "Names the missing input in its error", "zh-hans": "报错时指出缺少的输入"})
def names_a_missing_input(student, reference, rng):
    graph = build_graph(student, [("scaled", "lambda x, scale: x * scale", ["x", "scale"])])
    with raises("scale", what={
            "en": "`execute()` with `'scale'` neither fed nor an op", "zh-hans": "`'scale'` 既没有输入值也不是运算时的 `execute()`"}):
        graph.execute({"x": 3.0})


@check(points=3, title={"en": "Random graphs, ops added in any order", "zh-hans": "随机图，算子以任意顺序添加"})
def random_graphs_in_any_order(student, reference, rng):
    for size in (5, 20, 60):
        ops = random_graph(rng, size)
        feed = random_feed(rng)
        got, want = both(student, reference, ops, feed)
        close(got, want, what=localize(
            {"en": "`execute()` of a random graph of {size} ops", "zh-hans": "对有 {size} 个运算的随机计算图的 `execute()`"}, size=size))


@check(points=1, title={"en": "One graph run again with new inputs", "zh-hans": "同一张图换新输入再次运行"})
def same_graph_new_feeds(student, reference, rng):
    ops = random_graph(rng, 15)
    graph, expected = build_graph(student, ops), build_graph(reference, ops)
    graph.build()
    for _ in range(3):
        feed = random_feed(rng)
        close(graph.execute(feed), expected.execute(feed), what={
            "en": "a second `execute()` with new inputs", "zh-hans": "用新输入进行的第二次 `execute()`"})


@check(points=1, title={"en": "Repeated and empty dependency lists", "zh-hans": "重复的依赖与空依赖"})
def repeated_and_empty_dependencies(student, reference, rng):
    ops = [("sq", "lambda a, b: a * b", ["x", "x"]), ("k", "lambda: 4.0", []), ("out", "lambda s, k: s + k", ["sq", "k"])]
    ops = [ops[i] for i in rng.permutation(len(ops))]
    got, want = both(student, reference, ops, {"x": float(rng.normal())})
    close(got, want)


@check(points=1, title={"en": "Refuses a long cycle", "zh-hans": "拒绝较长的环"})
def rejects_a_long_cycle(student, reference, rng):
    ops = random_graph(rng, 12)
    names = [name for name, _, _ in ops]
    first, last = names[0], names[-1]
    ops = ops + [("loop_a", "lambda a, b: a + b", [last, "loop_b"]), ("loop_b", "lambda a: a", ["loop_a"])]
    graph = build_graph(student, ops)
    with raises("cycle"):
        graph.build()
    del first


@perf(points=2, title={"en": "Plans once, runs many times (speed)", "zh-hans": "只规划一次、多次运行（速度）"})
def plan_once_run_many(student, reference, rng):
    chain = [("v0", "lambda x: x * 0.5 + 1.0", ["x"])]
    chain += [(f"v{i}", "lambda a: a * 0.5 + 1.0", [f"v{i - 1}"]) for i in range(1, 1000)]
    order = rng.permutation(len(chain))
    ops = [chain[i] for i in order]
    mine, theirs = build_graph(student, ops), build_graph(reference, ops)
    mine.build()
    theirs.build()
    return Race(
        student=mine.execute,
        reference=theirs.execute,
        inputs=lambda rng: ({"x": float(rng.normal())},),
    )
