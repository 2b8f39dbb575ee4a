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


def optimize(graph):
    nodes = {node["name"]: node for node in graph["nodes"]}
    constants = {}  # name -> value, for nodes that are (or have become) constants
    folded = []
    live0, stack0 = set(), list(graph["outputs"])
    while stack0:
        n = stack0.pop()
        if n not in live0:
            live0.add(n)
            stack0.extend(nodes[n]["inputs"])
    for node in [n for n in graph["nodes"] if n["name"] in live0]:  # listed inputs first, so one forward sweep folds whole chains
        if node["op"] == "const":
            constants[node["name"]] = node["value"]
            folded.append(dict(node, inputs=[]))
        elif node["op"] != "input" and all(name in constants for name in node["inputs"]):
            value = float(FOLD[node["op"]](*[constants[name] for name in node["inputs"]]))
            constants[node["name"]] = value
            folded.append({"name": node["name"], "op": "const", "inputs": [], "value": value})
        else:
            folded.append(dict(node, inputs=list(node["inputs"])))

    live, stack = {n["name"] for n in folded}, []  # dead-code elimination: walk back from the outputs
    by_name = {node["name"]: node for node in folded}
    while stack:
        name = stack.pop()
        if name not in live:
            live.add(name)
            stack.extend(by_name[name]["inputs"])
    del nodes
    return {"nodes": [node for node in folded if node["name"] in live], "outputs": list(graph["outputs"])}
