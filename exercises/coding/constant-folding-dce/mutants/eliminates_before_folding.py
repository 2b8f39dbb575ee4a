# Removes dead nodes from the original graph, then folds: constants that only fed folded nodes survive.
import math

FOLD = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "max": lambda a, b: max(a, b),
    "neg": lambda a: -a,
    "exp": math.exp,
    "tanh": math.tanh,
    "relu": lambda a: max(a, 0.0),
}
# A new value on every run, or output someone sees: never computed ahead of time, never dropped.
IMPURE = {"random", "print"}


def optimize(graph):
    nodes = {node["name"]: node for node in graph["nodes"]}
    constants = {}  # name -> value, for nodes that are (or have become) constants
    folded = []
    live0 = set()
    stack0 = list(graph["outputs"]) + [n["name"] for n in graph["nodes"] if n["op"] in IMPURE]
    while stack0:
        n = stack0.pop()
        if n not in live0:
            live0.add(n)
            stack0.extend(nodes[n]["inputs"])
    for node in [n for n in graph["nodes"] if n["name"] in live0]:
        if node["op"] == "const":
            constants[node["name"]] = node["value"]
            folded.append(dict(node, inputs=[]))
        elif node["op"] not in ("input", *IMPURE) and all(name in constants for name in node["inputs"]):
            value = float(FOLD[node["op"]](*[constants[name] for name in node["inputs"]]))
            constants[node["name"]] = value
            folded.append({"name": node["name"], "op": "const", "inputs": [], "value": value})
        else:
            folded.append(dict(node, inputs=list(node["inputs"])))

    live = set()  # dead-code elimination: walk back from the outputs and from every side effect
    live, stack = {n["name"] for n in folded}, []
    by_name = {node["name"]: node for node in folded}
    while stack:
        name = stack.pop()
        if name not in live:
            live.add(name)
            stack.extend(by_name[name]["inputs"])
    del nodes
    return {"nodes": [node for node in folded if node["name"] in live], "outputs": list(graph["outputs"])}
