# Treats two graph inputs as the same value.
COMMUTATIVE = {"add", "mul", "max"}


def eliminate(graph):
    keep = {}  # name -> the name of the node that computes the same value first
    seen = {}  # value key -> name
    nodes = []
    for node in graph["nodes"]:
        inputs = [keep[name] for name in node["inputs"]]
        if node["op"] == "input":
            key = ("input",)
        elif node["op"] == "const":
            key = ("const", float(node["value"]))
        else:
            key = (node["op"], tuple(sorted(inputs)) if node["op"] in COMMUTATIVE else tuple(inputs))
        if key is not None and key in seen:
            keep[node["name"]] = seen[key]
            continue
        if key is not None:
            seen[key] = node["name"]
        keep[node["name"]] = node["name"]
        nodes.append(dict(node, inputs=inputs))
    return {"nodes": nodes, "outputs": [keep[name] for name in graph["outputs"]]}
