"""Checks for common-subexpressions: the same outputs on any feed, and exactly the nodes value numbering keeps."""
import numpy as np

from grader.harness import check, close, equal, fail, localize

RUN = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": lambda a, b: a / (1.5 + b * b), "max": np.maximum,
    "neg": np.negative, "tanh": np.tanh, "exp": lambda a: np.exp(np.tanh(a)),
}
UNARY = ["neg", "tanh", "exp"]
BINARY = ["add", "sub", "mul", "div", "max"]


def evaluate(graph, feed):
    values = {}
    for node in graph["nodes"]:
        op = node["op"]
        if op == "input":
            values[node["name"]] = feed[node["name"]]
        elif op == "const":
            values[node["name"]] = np.float64(node["value"])
        else:
            values[node["name"]] = RUN[op](*[values[name] for name in node["inputs"]])
    return [np.asarray(values[name], dtype=np.float64) for name in graph["outputs"]]


def compare(student, reference, graph, what, rng=None):
    got, want = student.eliminate(graph), reference.eliminate(graph)
    if not isinstance(got, dict) or not isinstance(got.get("nodes"), list) or not isinstance(got.get("outputs"), list):
        fail({"en": "{what}: `eliminate()` must return a dict with lists under `'nodes'` and `'outputs'`",
              "zh-hans": "{what}：`eliminate()` 必须返回一个 dict，其 `'nodes'` 和 `'outputs'` 下都是列表"}, what=what)
    names = set()
    for node in got["nodes"]:
        for name in node["inputs"]:
            if name not in names:
                fail({"en": "{what}: node `{node!r}` uses `{name!r}`, which is not a node listed before it",
                      "zh-hans": "{what}：节点 `{node!r}` 用到了 `{name!r}`，但它不是排在前面的节点"},
                     what=what, node=node["name"], name=name)
        names.add(node["name"])
    inputs = [n["name"] for n in graph["nodes"] if n["op"] == "input"]
    seeded = rng or np.random.default_rng(0)
    feed = {name: seeded.normal(size=4) for name in inputs}
    if any(name not in names for name in got["outputs"]):
        fail({"en": "{what}: every output must name a node of the new graph",
              "zh-hans": "{what}：每个输出都必须是新计算图中的节点名"}, what=what)
    close(evaluate(got, feed), evaluate(graph, feed), what=localize(
        {"en": "{what}: outputs of the new graph", "zh-hans": "{what}：新计算图的输出"}, what=what))
    mine = sorted(n["name"] for n in got["nodes"])
    theirs = sorted(n["name"] for n in want["nodes"])
    extra = sorted(set(mine) - set(theirs))
    if extra:
        fail({"en": "{what}: `{node!r}` computes a value an earlier node already computes",
              "zh-hans": "{what}：`{node!r}` 计算的值已由前面的某个节点算过"}, what=what, node=extra[0])
    missing = sorted(set(theirs) - set(mine))
    if missing:
        fail({"en": "{what}: `{node!r}` is gone, but no earlier node computes its value",
              "zh-hans": "{what}：`{node!r}` 被删掉了，但前面没有节点计算同样的值"}, what=what, node=missing[0])
    equal(list(got["outputs"]), list(want["outputs"]), what=localize({"en": "{what}: outputs", "zh-hans": "{what}：输出"}, what=what))


def graph(*nodes, outputs):
    out = []
    for name, op, *rest in nodes:
        node = {"name": name, "op": op, "inputs": list(rest)}
        if op == "const":
            node = {"name": name, "op": op, "inputs": [], "value": rest[0]}
        out.append(node)
    return {"nodes": out, "outputs": list(outputs)}


@check(points=1, title={"en": "The same product computed twice becomes one node", "zh-hans": "重复计算的同一乘积合并为一个节点"})
def the_same_product_twice(student, reference, rng):
    g = graph(("w", "input"), ("x", "input"), ("b", "input"), ("wx", "mul", "w", "x"), ("z", "add", "wx", "b"),
              ("wx2", "mul", "w", "x"), ("z2", "add", "wx2", "b"), ("out", "sub", "z", "z2"), outputs=["out", "z2"])
    compare(student, reference, g, {"en": "z = w*x + b computed twice", "zh-hans": "z = w*x + b 计算了两次"})


@check(points=1, title={"en": "a + b and b + a are the same value", "zh-hans": "a + b 与 b + a 视为同一个值"})
def commutative_ops_match_either_way(student, reference, rng):
    g = graph(("a", "input"), ("b", "input"), ("s1", "add", "a", "b"), ("s2", "add", "b", "a"), ("d1", "sub", "a", "b"),
              ("d2", "sub", "b", "a"), ("o", "mul", "s1", "s2"), ("p", "mul", "d1", "d2"), ("q", "add", "o", "p"), outputs=["q"])
    compare(student, reference, g, {"en": "a+b vs b+a, and a-b vs b-a", "zh-hans": "a+b 与 b+a，以及 a-b 与 b-a"})


@check(points=1, title={"en": "Merges cascade up the graph", "zh-hans": "合并沿计算图逐层传递"})
def merges_cascade(student, reference, rng):
    g = graph(("x", "input"), ("t1", "tanh", "x"), ("t2", "tanh", "x"), ("e1", "exp", "t1"), ("e2", "exp", "t2"),
              ("y", "sub", "e1", "e2"), outputs=["y", "e2"])
    compare(student, reference, g, {"en": "`exp(tanh(x))` twice", "zh-hans": "两次 `exp(tanh(x))`"})


@check(points=1, title={"en": "Inputs and constants are handled right", "zh-hans": "正确处理输入与常量"})
def inputs_and_constants(student, reference, rng):
    g = graph(("x", "input"), ("y", "input"), ("c1", "const", 2.0), ("c2", "const", 2.0), ("c3", "const", 3.0),
              ("a", "mul", "x", "c1"), ("b", "mul", "c2", "x"), ("c", "mul", "y", "c3"), ("o", "add", "a", "b"),
              ("p", "add", "o", "c"), outputs=["p"])
    compare(student, reference, g, {"en": "inputs x, y and constants 2.0, 2.0, 3.0",
                                     "zh-hans": "输入 x、y 与常量 2.0、2.0、3.0"})


def random_graph(rng, size):
    nodes = [{"name": f"in{i}", "op": "input", "inputs": []} for i in range(3)]
    for i in range(size):
        names = [n["name"] for n in nodes]
        if rng.random() < 0.1:
            nodes.append({"name": f"v{i}", "op": "const", "inputs": [], "value": float(rng.choice([0.5, 1.0, 2.0]))})
            continue
        if rng.random() < 0.3 and len(nodes) > 4:  # repeat an earlier op, maybe with swapped inputs
            earlier = nodes[int(rng.integers(3, len(nodes)))]
            if earlier["op"] not in ("input", "const"):
                deps = list(earlier["inputs"])
                if rng.random() < 0.5:
                    deps.reverse()
                nodes.append({"name": f"v{i}", "op": earlier["op"], "inputs": deps})
                continue
        if rng.random() < 0.4:
            nodes.append({"name": f"v{i}", "op": str(rng.choice(UNARY)), "inputs": [str(rng.choice(names))]})
        else:
            nodes.append({"name": f"v{i}", "op": str(rng.choice(BINARY)), "inputs": [str(rng.choice(names)), str(rng.choice(names))]})
    ops = [n["name"] for n in nodes if n["op"] != "input"]
    return {"nodes": nodes, "outputs": [str(o) for o in rng.choice(ops, size=3)]}


@check(points=3, title={"en": "Random graphs", "zh-hans": "随机计算图"})
def random_graphs(student, reference, rng):
    for size in (10, 40, 120):
        compare(student, reference, random_graph(rng, size), localize(
            {"en": "a random graph of {size} nodes", "zh-hans": "有 {size} 个节点的随机计算图"}, size=size), rng)
