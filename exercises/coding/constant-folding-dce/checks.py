"""Checks for constant-folding-dce: same outputs and printed values on any feed, and exactly the
folded, live nodes; random and print nodes are never folded and never removed."""
import zlib

import numpy as np

from grader.harness import as_code, check, close, equal, fail, localize

BINARY = ["add", "sub", "mul", "div", "max"]
UNARY = ["neg", "exp", "tanh", "relu"]
RUN = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "max": np.maximum,
    "neg": np.negative, "exp": np.exp, "tanh": np.tanh, "relu": lambda a: np.maximum(a, 0.0),
}


def evaluate(graph, feed, run=0):
    """Run a graph on numpy values: its outputs and what it printed, in order.

    A random node draws from a generator seeded by its name and the run number, so the same
    node gives the same value in the original and the optimized graph, and a new one each run.
    """
    values, printed = {}, []
    for node in graph["nodes"]:
        op, name = node["op"], node["name"]
        if op == "input":
            values[name] = feed[name]
        elif op == "const":
            values[name] = np.float64(node["value"])
        elif op == "random":
            values[name] = np.random.default_rng([zlib.crc32(name.encode()), run]).uniform()
        elif op == "print":
            values[name] = values[node["inputs"][0]]
            printed.append((name, np.asarray(values[name], dtype=np.float64)))
        else:
            values[name] = RUN[op](*[values[i] for i in node["inputs"]])
    return {"outputs": {name: np.asarray(values[name], dtype=np.float64) for name in graph["outputs"]}, "printed": printed}


def well_formed(graph, what):
    if not isinstance(graph, dict) or not isinstance(graph.get("nodes"), list):
        fail({"en": "{what}: `optimize()` must return a dict with a list under `'nodes'`, got `{graph!r:.80}`",
              "zh-hans": "{what}：`optimize()` 必须返回一个 `'nodes'` 下为列表的 dict，实际返回 `{graph!r:.80}`"},
             what=what, graph=graph)
    seen = set()
    for node in graph["nodes"]:
        if not isinstance(node, dict) or "name" not in node or "op" not in node:
            fail({"en": "{what}: every node must be a dict with `'name'`, `'op'` and `'inputs'`, got `{node!r:.80}`",
                  "zh-hans": "{what}：每个节点都必须是含 `'name'`、`'op'` 和 `'inputs'` 的 dict，实际为 `{node!r:.80}`"},
                 what=what, node=node)
        for name in node.get("inputs", []):
            if name not in seen:
                fail({"en": "{what}: node `{node!r}` uses `{name!r}`, which is not listed before it",
                      "zh-hans": "{what}：节点 `{node!r}` 用到了 `{name!r}`，但它没有排在前面"},
                     what=what, node=node["name"], name=name)
        seen.add(node["name"])
    if graph.get("outputs") is None or any(name not in seen for name in graph["outputs"]):
        fail({"en": "{what}: every output must still be a node of the graph",
              "zh-hans": "{what}：每个输出都必须仍是计算图中的节点"}, what=what)


def compare(student, reference, graph, feeds, what):
    got, want = student.optimize(graph), reference.optimize(graph)
    well_formed(got, what)
    for run, feed in enumerate(feeds):
        mine, theirs = evaluate(got, feed, run), evaluate(graph, feed, run)
        close(mine["outputs"], theirs["outputs"], rtol=1e-9, atol=1e-12, what=localize(
            {"en": "{what}: outputs of the optimized graph", "zh-hans": "{what}：优化后计算图的输出"}, what=what))
        if [name for name, _ in mine["printed"]] != [name for name, _ in theirs["printed"]]:
            fail({"en": "{what}: the optimized graph prints {mine}, the original prints {theirs}: "
                        "a print is a side effect, and it must survive",
                  "zh-hans": "{what}：优化后的计算图打印 {mine}，原计算图打印 {theirs}：打印是副作用，必须保留"},
                 what=what, mine=[n for n, _ in mine["printed"]], theirs=[n for n, _ in theirs["printed"]])
        close(mine["printed"], theirs["printed"], rtol=1e-9, atol=1e-12, what=localize(
            {"en": "{what}: the printed values", "zh-hans": "{what}：打印出的值"}, what=what))
    mine = {node["name"]: node for node in got["nodes"]}
    theirs = {node["name"]: node for node in want["nodes"]}
    dead = sorted(set(mine) - set(theirs))
    if dead:
        fail({"en": "{what}: node `{node!r}` should be gone (it is dead, or folded into a constant nobody else uses)",
              "zh-hans": "{what}：节点 `{node!r}` 应当被删除（它是死代码，或已折叠进一个没有其他节点使用的常量）"},
             what=what, node=dead[0])
    lost = sorted(set(theirs) - set(mine))
    if lost:
        fail({"en": "{what}: node `{node!r}` is missing, but an output still needs it",
              "zh-hans": "{what}：缺少节点 `{node!r}`，但仍有输出需要它"}, what=what, node=lost[0])
    for name, node in theirs.items():
        if node["op"] in ("random", "print") and mine[name]["op"] != node["op"]:
            fail({"en": "{what}: node `{name!r}` is a {op} node: it must stay one, not become a `{became!r}` node",
                  "zh-hans": "{what}：节点 `{name!r}` 是 {op} 节点：它必须保持不变，不能变成 `{became!r}` 节点"},
                 what=what, name=name, op=node["op"], became=mine[name]["op"])
        if node["op"] == "const" and mine[name]["op"] != "const":
            fail({"en": "{what}: node `{name!r}` depends only on constants and should have been folded",
                  "zh-hans": "{what}：节点 `{name!r}` 只依赖常量，应当被折叠"}, what=what, name=name)
        if node["op"] != "const" and mine[name]["op"] == "const":
            fail({"en": "{what}: node `{name!r}` depends on an input and cannot be a constant",
                  "zh-hans": "{what}：节点 `{name!r}` 依赖输入，不能是常量"}, what=what, name=name)
        if node["op"] == "const":
            close(mine[name].get("value"), node["value"], rtol=1e-9, atol=1e-12, what=localize(
                {"en": "{what}: the value of `{name!r}`", "zh-hans": "{what}：`{name!r}` 的值"}, what=what, name=name))
    equal(list(got["outputs"]), list(graph["outputs"]), what=localize({"en": "{what}: outputs", "zh-hans": "{what}：输出"}, what=what))


def feeds_for(graph, rng, count=2):
    inputs = [node["name"] for node in graph["nodes"] if node["op"] == "input"]
    return [{name: rng.uniform(-1.5, 1.5, size=3) for name in inputs} for _ in range(count)]


def with_side_effects(rng, graph):
    """The graph with a few random nodes used by others and a few prints, some of them dead."""
    nodes = []
    for node in graph["nodes"]:
        nodes.append(node)
        roll = float(rng.random())
        if roll < 0.08:
            nodes.append({"name": f"{node['name']}_noise", "op": "random", "inputs": []})
            nodes.append({"name": f"{node['name']}_jitter", "op": "add", "inputs": [node["name"], f"{node['name']}_noise"]})
        elif roll < 0.16 and node["op"] != "input":
            nodes.append({"name": f"{node['name']}_shown", "op": "print", "inputs": [node["name"]]})
    return {"nodes": nodes, "outputs": graph["outputs"]}


def random_graph(rng, size):
    """Constants, inputs and ops in dependency order; some chains are all-constant, some dead."""
    nodes, kinds = [], {}
    for i in range(size):
        name = f"n{i}"
        roll = float(rng.random())
        if i < 2 or roll < 0.12:
            node = {"name": name, "op": "input", "inputs": []}
        elif i < 4 or roll < 0.3:
            node = {"name": name, "op": "const", "inputs": [], "value": round(float(rng.uniform(-2, 2)), 3)}
        else:
            earlier = [n["name"] for n in nodes]
            consts = [n for n in earlier if kinds[n] == "const"]
            pool = consts if consts and rng.random() < 0.5 else earlier  # favour constant chains
            if rng.random() < 0.6:
                op = BINARY[int(rng.integers(len(BINARY)))]
                a, b = str(rng.choice(pool)), str(rng.choice(pool))
                if op == "div":  # divide only by a safe denominator
                    b = f"n{i}_den"
                    nodes.append({"name": b, "op": "const", "inputs": [], "value": round(float(rng.uniform(1, 3)), 3)})
                    kinds[b] = "const"
                node = {"name": name, "op": op, "inputs": [a, b]}
            else:
                op = UNARY[int(rng.integers(len(UNARY)))]
                a = str(rng.choice(pool))
                if op == "exp":  # exp of a tanh: finite whatever the input
                    nodes.append({"name": f"n{i}_t", "op": "tanh", "inputs": [a]})
                    kinds[f"n{i}_t"] = kinds[a] if kinds[a] == "const" else "var"
                    a = f"n{i}_t"
                node = {"name": name, "op": op, "inputs": [a]}
            deps = node["inputs"]
            kinds[name] = "const" if all(kinds.get(d) == "const" for d in deps) else "var"
            nodes.append(node)
            continue
        kinds[name] = node["op"] if node["op"] == "const" else "var"
        nodes.append(node)
    names = [n["name"] for n in nodes if n["op"] not in ("input", "const")]
    picks = rng.choice(len(names), size=min(3, len(names)), replace=False)
    return {"nodes": nodes, "outputs": sorted({names[int(i)] for i in picks})}


# The article's neuron with a constant-only subexpression and a forgotten debug value.
NEURON = {
    "nodes": [
        {"name": "x", "op": "input", "inputs": []},
        {"name": "w", "op": "const", "inputs": [], "value": 2.0},
        {"name": "b", "op": "const", "inputs": [], "value": -2.0},
        {"name": "half", "op": "const", "inputs": [], "value": 0.5},
        {"name": "scale", "op": "mul", "inputs": ["w", "half"]},
        {"name": "shift", "op": "neg", "inputs": ["b"]},
        {"name": "wx", "op": "mul", "inputs": ["scale", "x"]},
        {"name": "z", "op": "add", "inputs": ["wx", "b"]},
        {"name": "debug", "op": "exp", "inputs": ["z"]},
        {"name": "unused", "op": "add", "inputs": ["shift", "w"]},
    ],
    "outputs": ["z"],
}


@check(points=2, title={"en": "Folds and removes nodes in the article's neuron", "zh-hans": "在文章的神经元例子中完成折叠与删除"})
def folds_and_removes_in_the_article_neuron(student, reference, rng):
    compare(student, reference, NEURON, [{"x": np.array([5.0, -1.0, 0.5])}], {"en": "the neuron z = (w*0.5)*x + b", "zh-hans": "神经元 z = (w*0.5)*x + b"})


@check(points=1, title={"en": "Folds a chain of constants", "zh-hans": "折叠一串常量运算"})
def folds_a_chain_of_constants(student, reference, rng):
    graph = {
        "nodes": [
            {"name": "c1", "op": "const", "inputs": [], "value": 0.5},
            {"name": "c2", "op": "exp", "inputs": ["c1"]},
            {"name": "c3", "op": "tanh", "inputs": ["c2"]},
            {"name": "c4", "op": "max", "inputs": ["c3", "c1"]},
            {"name": "x", "op": "input", "inputs": []},
            {"name": "y", "op": "mul", "inputs": ["x", "c4"]},
        ],
        "outputs": ["y"],
    }
    compare(student, reference, graph, [{"x": np.array([1.0, 2.0, 3.0])}], as_code("y = x * max(tanh(exp(0.5)), 0.5)"))


@check(points=1, title={"en": "A constant output stays an output", "zh-hans": "值为常量的输出仍然保留为输出"})
def an_output_that_is_constant_stays_an_output(student, reference, rng):
    graph = {
        "nodes": [
            {"name": "a", "op": "const", "inputs": [], "value": 3.0},
            {"name": "b", "op": "const", "inputs": [], "value": 4.0},
            {"name": "area", "op": "mul", "inputs": ["a", "b"]},
            {"name": "x", "op": "input", "inputs": []},
            {"name": "y", "op": "relu", "inputs": ["x"]},
        ],
        "outputs": ["area", "y"],
    }
    compare(student, reference, graph, [{"x": np.array([-1.0, 0.0, 2.0])}], {"en": "outputs `area = 3*4` and `y = relu(x)`",
                                                                            "zh-hans": "输出 `area = 3*4` 与 `y = relu(x)`"})


@check(points=1, title={"en": "Leaves the input graph untouched", "zh-hans": "不修改传入的原图"})
def leaves_the_input_graph_untouched(student, reference, rng):
    # The judge notices in-place changes to arguments; this check exists to say why it matters.
    got = student.optimize(NEURON)
    well_formed(got, "optimize(neuron)")


@check(points=2, title={"en": "random and print nodes survive", "zh-hans": "random 与 print 节点被保留"})
def random_and_print_nodes_survive(student, reference, rng):
    graph = {
        "nodes": [
            {"name": "x", "op": "input", "inputs": []},
            {"name": "half", "op": "const", "inputs": [], "value": 0.5},
            {"name": "two", "op": "const", "inputs": [], "value": 2.0},
            {"name": "one", "op": "mul", "inputs": ["half", "two"]},
            {"name": "noise", "op": "random", "inputs": []},
            {"name": "scaled", "op": "mul", "inputs": ["noise", "half"]},
            {"name": "shown", "op": "print", "inputs": ["one"]},
            {"name": "y", "op": "add", "inputs": ["x", "scaled"]},
            {"name": "debug", "op": "print", "inputs": ["x"]},
            {"name": "unused_noise", "op": "random", "inputs": []},
        ],
        "outputs": ["y"],
    }
    feeds = [{"x": np.array([1.0, -2.0, 0.5])}, {"x": np.array([0.0, 3.0, -1.0])}]
    compare(student, reference, graph, feeds, {
        "en": "`y = x + random() * 0.5`, with `print(0.5 * 2)`, `print(x)` and an unused `random()`",
        "zh-hans": "`y = x + random() * 0.5`，另有 `print(0.5 * 2)`、`print(x)` 和一个没有用到的 `random()`"})


@check(points=3, title={"en": "Random graphs", "zh-hans": "随机计算图"})
def random_graphs(student, reference, rng):
    for size in (10, 30, 80):
        graph = random_graph(rng, size)
        compare(student, reference, graph, feeds_for(graph, rng), localize(
            {"en": "a random graph of {size} nodes", "zh-hans": "有 {size} 个节点的随机计算图"}, size=size))


@check(points=2, title={"en": "Random graphs with side effects", "zh-hans": "带副作用的随机计算图"})
def random_graphs_with_side_effects(student, reference, rng):
    for size in (15, 60):
        graph = with_side_effects(rng, random_graph(rng, size))
        compare(student, reference, graph, feeds_for(graph, rng, 3), localize(
            {"en": "a random graph of {size} nodes with random and print nodes",
             "zh-hans": "有 {size} 个节点、含 random 和 print 节点的随机计算图"}, size=size))


@check(points=1, title={"en": "A graph with nothing to fold", "zh-hans": "没有可折叠内容的图"})
def a_graph_with_nothing_to_fold(student, reference, rng):
    kept, names = [], set()
    for node in random_graph(rng, 25)["nodes"]:  # the same graph with every constant taken out
        if node["op"] != "const" and all(name in names for name in node["inputs"]):
            kept.append(node)
            names.add(node["name"])
    graph = {"nodes": kept, "outputs": []}
    ops = [n["name"] for n in graph["nodes"] if n["op"] != "input"]
    graph["outputs"] = ops[-2:] if ops else [graph["nodes"][0]["name"]]
    compare(student, reference, graph, feeds_for(graph, rng), {"en": "a graph without constants", "zh-hans": "不含常量的计算图"})
