# Treats a random node like a constant: draws one number at compile time and every run reuses it.
import math
import random

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
    for node in graph["nodes"]:  # listed inputs first, so one forward sweep folds whole chains
        if node["op"] == "const":
            constants[node["name"]] = node["value"]
            folded.append(dict(node, inputs=[]))
        elif node["op"] == "random":
            constants[node["name"]] = random.random()
            folded.append({"name": node["name"], "op": "const", "inputs": [], "value": constants[node["name"]]})
        elif node["op"] not in ("input", *IMPURE) and all(name in constants for name in node["inputs"]):
            value = float(FOLD[node["op"]](*[constants[name] for name in node["inputs"]]))
            constants[node["name"]] = value
            folded.append({"name": node["name"], "op": "const", "inputs": [], "value": value})
        else:
            folded.append(dict(node, inputs=list(node["inputs"])))

    live = set()  # dead-code elimination: walk back from the outputs and from every side effect
    stack = list(graph["outputs"]) + [node["name"] for node in folded if node["op"] in IMPURE]
    by_name = {node["name"]: node for node in folded}
    while stack:
        name = stack.pop()
        if name not in live:
            live.add(name)
            stack.extend(by_name[name]["inputs"])
    del nodes
    return {"nodes": [node for node in folded if node["name"] in live], "outputs": list(graph["outputs"])}
