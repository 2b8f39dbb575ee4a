"""Checks for elementwise-fusion: the kernels the fusion rule gives, in an order that can run."""
import numpy as np

from grader.harness import as_code, check, close, fail, localize

ELEMENTWISE = ["add", "sub", "mul", "div", "neg", "exp", "tanh", "relu"]
UNARY = {"neg", "exp", "tanh", "relu"}
RUN = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": lambda a, b: a / (1.0 + np.abs(b)),
    "neg": np.negative, "exp": lambda a: np.exp(np.tanh(a)), "tanh": np.tanh, "relu": lambda a: np.maximum(a, 0.0),
    "matmul": lambda a, b: a @ b / a.shape[-1], "sum": lambda a: np.broadcast_to(np.mean(a, axis=-1, keepdims=True), a.shape),
}


def run_plan(graph, kernels, feed):
    """Execute kernel by kernel, as a runtime would: a kernel may only read values already stored."""
    by_name = {node["name"]: node for node in graph["nodes"]}
    stored = dict(feed)
    for kernel in kernels:
        local = {}
        for name in kernel:
            args = []
            for dep in by_name[name]["inputs"]:
                if dep in local:
                    args.append(local[dep])
                elif dep in stored:
                    args.append(stored[dep])
                else:
                    fail({"en": "kernel {kernel} runs `{name!r}` before `{dep!r}` has been computed",
                          "zh-hans": "内核 {kernel} 在 `{dep!r}` 算出之前就运行了 `{name!r}`"},
                         kernel=kernel, name=name, dep=dep)
            local[name] = RUN[by_name[name]["op"]](*args)
        stored.update(local)
    return {name: stored[name] for name in graph["outputs"]}


def valid_partition(graph, kernels, what):
    if not isinstance(kernels, list) or not all(isinstance(k, list) and k for k in kernels):
        fail({"en": "{what}: `fuse()` must return a list of non-empty lists of node names",
              "zh-hans": "{what}：`fuse()` 必须返回一个列表，其中每项都是由节点名组成的非空列表"}, what=what)
    ops = [n["name"] for n in graph["nodes"] if n["op"] != "input"]
    placed = [name for kernel in kernels for name in kernel]
    for name in placed:
        if name not in ops:
            fail({"en": "{what}: `{name!r}` is not an op of the graph (inputs are never in a kernel)",
                  "zh-hans": "{what}：`{name!r}` 不是计算图中的运算（输入永远不放进内核）"}, what=what, name=name)
    twice = sorted({name for name in placed if placed.count(name) > 1})
    if twice:
        fail({"en": "{what}: `{name!r}` is in more than one kernel", "zh-hans": "{what}：`{name!r}` 出现在不止一个内核中"},
             what=what, name=twice[0])
    missing = [name for name in ops if name not in placed]
    if missing:
        fail({"en": "{what}: `{name!r}` is in no kernel", "zh-hans": "{what}：`{name!r}` 不在任何内核中"},
             what=what, name=missing[0])


def compare(student, reference, graph, what):
    got = student.fuse(graph)
    valid_partition(graph, got, what)
    want = reference.fuse(graph)
    inputs = [n["name"] for n in graph["nodes"] if n["op"] == "input"]
    feed = {name: np.linspace(-1, 1, 16).reshape(4, 4) + i for i, name in enumerate(inputs)}
    close(run_plan(graph, got, feed), run_plan(graph, want, feed), what=localize(
        {"en": "{what}: outputs when run kernel by kernel", "zh-hans": "{what}：逐个内核运行时的输出"}, what=what))
    mine = sorted(sorted(k) for k in got)
    theirs = sorted(sorted(k) for k in want)
    if mine != theirs:
        missed = next((k for k in theirs if k not in mine), None)
        wrong = next((k for k in mine if k not in theirs), None)
        if missed:
            fail({"en": "{what}: {got} kernels, the fusion rule gives {want}; {kernel} should be one kernel",
                  "zh-hans": "{what}：得到 {got} 个内核，按融合规则应为 {want} 个；{kernel} 应当合成一个内核"},
                 what=what, got=len(got), want=len(want), kernel=missed)
        fail({"en": "{what}: {got} kernels, the fusion rule gives {want}; {kernel} should not be one kernel",
              "zh-hans": "{what}：得到 {got} 个内核，按融合规则应为 {want} 个；{kernel} 不应合成一个内核"},
             what=what, got=len(got), want=len(want), kernel=wrong)


def random_graph(rng, size):
    nodes = [{"name": f"in{i}", "op": "input", "inputs": []} for i in range(2)]
    for i in range(size):
        names = [n["name"] for n in nodes]
        recent = names[-1] if rng.random() < 0.6 else str(rng.choice(names))
        roll = rng.random()
        if roll < 0.1:
            node = {"name": f"v{i}", "op": "matmul", "inputs": [recent, "w"]}
        elif roll < 0.15:
            node = {"name": f"v{i}", "op": "sum", "inputs": [recent]}
        else:
            op = ELEMENTWISE[int(rng.integers(len(ELEMENTWISE)))]
            deps = [recent] if op in UNARY else [recent, str(rng.choice(names))]
            node = {"name": f"v{i}", "op": op, "inputs": deps}
        nodes.append(node)
    nodes.insert(0, {"name": "w", "op": "input", "inputs": []})
    ops = [n["name"] for n in nodes if n["op"] != "input"]
    outputs = sorted({ops[-1], *[str(o) for o in rng.choice(ops, size=2)]})
    return {"nodes": nodes, "outputs": outputs}


def graph(*nodes, outputs):
    return {"nodes": [{"name": n, "op": op, "inputs": list(deps)} for n, op, *deps in nodes], "outputs": list(outputs)}


# The article's multiply-add: wx = w * x; z = wx + b; one kernel, wx never stored.
MULTIPLY_ADD = graph(("w", "input"), ("x", "input"), ("b", "input"), ("wx", "mul", "w", "x"), ("z", "add", "wx", "b"), outputs=["z"])


@check(points=1, title={"en": "Fuses the article's multiply-add", "zh-hans": "融合文章中的乘加运算"})
def fuses_the_article_multiply_add(student, reference, rng):
    compare(student, reference, MULTIPLY_ADD, as_code("z = w * x + b"))


@check(points=1, title={"en": "Fuses a long chain", "zh-hans": "融合一条长链"})
def fuses_a_long_chain(student, reference, rng):
    g = graph(("x", "input"), ("a", "mul", "x", "x"), ("b", "tanh", "a"), ("c", "neg", "b"), ("d", "exp", "c"),
              ("e", "relu", "d"), outputs=["e"])
    compare(student, reference, g, as_code("relu(exp(-tanh(x * x)))"))


@check(points=1, title={"en": "A value used twice is stored", "zh-hans": "被使用两次的值会被存下来"})
def a_value_used_twice_is_stored(student, reference, rng):
    g = graph(("x", "input"), ("t", "tanh", "x"), ("a", "mul", "t", "x"), ("b", "add", "t", "x"), ("c", "mul", "a", "b"),
              outputs=["c"])
    compare(student, reference, g, as_code("t = tanh(x); c = (t * x) * (t + x)"))


@check(points=1, title={"en": "matmul and sum are kernels of their own", "zh-hans": "matmul 与 sum 各自是独立的内核"})
def matmul_and_sum_are_kernels_of_their_own(student, reference, rng):
    g = graph(("x", "input"), ("w", "input"), ("p", "tanh", "x"), ("h", "matmul", "p", "w"), ("a", "relu", "h"),
              ("s", "sum", "a"), ("n", "div", "a", "s"), ("o", "tanh", "n"), outputs=["o"])
    compare(student, reference, g, as_code("a = relu(tanh(x) @ w); o = tanh(a / sum(a))"))


@check(points=1, title={"en": "An output inside a chain is still stored", "zh-hans": "位于链中间的输出仍会被存下来"})
def an_output_is_stored_even_inside_a_chain(student, reference, rng):
    g = graph(("x", "input"), ("a", "exp", "x"), ("b", "mul", "a", "x"), ("c", "tanh", "b"), outputs=["b", "c"])
    compare(student, reference, g, {"en": "outputs `b = exp(x) * x` and `c = tanh(b)`",
                                     "zh-hans": "输出 `b = exp(x) * x` 与 `c = tanh(b)`"})


@check(points=3, title={"en": "Random graphs", "zh-hans": "随机计算图"})
def random_graphs(student, reference, rng):
    for size in (8, 25, 60, 150):
        compare(student, reference, random_graph(rng, size), localize(
            {"en": "a random graph of {size} ops", "zh-hans": "有 {size} 个运算的随机计算图"}, size=size))


@check(points=1, title={"en": "An op may use the same input twice", "zh-hans": "算子可以两次使用同一个输入"})
def ops_may_use_the_same_input_twice(student, reference, rng):
    g = graph(("x", "input"), ("a", "neg", "x"), ("sq", "mul", "a", "a"), ("o", "exp", "sq"), outputs=["o"])
    compare(student, reference, g, as_code("exp((-x) * (-x))"))
