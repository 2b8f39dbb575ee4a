"""Checks for constant-folding-dce: same outputs and printed values on any feed, and exactly the
folded, live nodes; random and print nodes are never folded and never removed."""
import zlib

import numpy as np

from grader.harness import check, close, equal, fail

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
        fail(f"{what}: optimize() must return a dict with a list under 'nodes', got {graph!r:.80}")
    seen = set()
    for node in graph["nodes"]:
        if not isinstance(node, dict) or "name" not in node or "op" not in node:
            fail(f"{what}: every node must be a dict with 'name', 'op' and 'inputs', got {node!r:.80}")
        for name in node.get("inputs", []):
            if name not in seen:
                fail(f"{what}: node {node['name']!r} uses {name!r}, which is not listed before it")
        seen.add(node["name"])
    if graph.get("outputs") is None or any(name not in seen for name in graph["outputs"]):
        fail(f"{what}: every output must still be a node of the graph")


def compare(student, reference, graph, feeds, what):
    got, want = student.optimize(graph), reference.optimize(graph)
    well_formed(got, what)
    for run, feed in enumerate(feeds):
        mine, theirs = evaluate(got, feed, run), evaluate(graph, feed, run)
        close(mine["outputs"], theirs["outputs"], rtol=1e-9, atol=1e-12, what=f"{what}: outputs of the optimized graph")
        if [name for name, _ in mine["printed"]] != [name for name, _ in theirs["printed"]]:
            fail(f"{what}: the optimized graph prints {[n for n, _ in mine['printed']]}, the original prints "
                 f"{[n for n, _ in theirs['printed']]}: a print is a side effect, and it must survive")
        close(mine["printed"], theirs["printed"], rtol=1e-9, atol=1e-12, what=f"{what}: the printed values")
    mine = {node["name"]: node for node in got["nodes"]}
    theirs = {node["name"]: node for node in want["nodes"]}
    dead = sorted(set(mine) - set(theirs))
    if dead:
        fail(f"{what}: node {dead[0]!r} should be gone (it is dead, or folded into a constant nobody else uses)")
    lost = sorted(set(theirs) - set(mine))
    if lost:
        fail(f"{what}: node {lost[0]!r} is missing, but an output still needs it")
    for name, node in theirs.items():
        if node["op"] in ("random", "print") and mine[name]["op"] != node["op"]:
            fail(f"{what}: node {name!r} is a {node['op']} node: it must stay one, not become a {mine[name]['op']!r} node")
        if node["op"] == "const" and mine[name]["op"] != "const":
            fail(f"{what}: node {name!r} depends only on constants and should have been folded")
        if node["op"] != "const" and mine[name]["op"] == "const":
            fail(f"{what}: node {name!r} depends on an input and cannot be a constant")
        if node["op"] == "const":
            close(mine[name].get("value"), node["value"], rtol=1e-9, atol=1e-12, what=f"{what}: the value of {name!r}")
    equal(list(got["outputs"]), list(graph["outputs"]), what=f"{what}: outputs")


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


@check(points=2)
def folds_and_removes_in_the_article_neuron(student, reference, rng):
    compare(student, reference, NEURON, [{"x": np.array([5.0, -1.0, 0.5])}], "the neuron z = (w*0.5)*x + b")


@check(points=1)
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
    compare(student, reference, graph, [{"x": np.array([1.0, 2.0, 3.0])}], "y = x * max(tanh(exp(0.5)), 0.5)")


@check(points=1)
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
    compare(student, reference, graph, [{"x": np.array([-1.0, 0.0, 2.0])}], "outputs area = 3*4 and y = relu(x)")


@check(points=1)
def leaves_the_input_graph_untouched(student, reference, rng):
    # The judge notices in-place changes to arguments; this check exists to say why it matters.
    got = student.optimize(NEURON)
    well_formed(got, "optimize(neuron)")


@check(points=2)
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
    compare(student, reference, graph, feeds, "y = x + random() * 0.5, with print(0.5 * 2), print(x) and an unused random()")


@check(points=3)
def random_graphs(student, reference, rng):
    for size in (10, 30, 80):
        graph = random_graph(rng, size)
        compare(student, reference, graph, feeds_for(graph, rng), f"a random graph of {size} nodes")


@check(points=2)
def random_graphs_with_side_effects(student, reference, rng):
    for size in (15, 60):
        graph = with_side_effects(rng, random_graph(rng, size))
        compare(student, reference, graph, feeds_for(graph, rng, 3), f"a random graph of {size} nodes with random and print nodes")


@check(points=1)
def a_graph_with_nothing_to_fold(student, reference, rng):
    kept, names = [], set()
    for node in random_graph(rng, 25)["nodes"]:  # the same graph with every constant taken out
        if node["op"] != "const" and all(name in names for name in node["inputs"]):
            kept.append(node)
            names.add(node["name"])
    graph = {"nodes": kept, "outputs": []}
    ops = [n["name"] for n in graph["nodes"] if n["op"] != "input"]
    graph["outputs"] = ops[-2:] if ops else [graph["nodes"][0]["name"]]
    compare(student, reference, graph, feeds_for(graph, rng), "a graph without constants")
