COMMUTATIVE = {"add", "mul", "max"}


def eliminate(graph):
    """Return a new graph in which every value is computed once; outputs name the nodes that remain."""
    nodes = [dict(node, inputs=list(node["inputs"])) for node in graph["nodes"]]
    # TODO: when a node repeats an earlier node's op on the same inputs, drop it and point its users
    #       (and the outputs) at the earlier node
    return {"nodes": nodes, "outputs": list(graph["outputs"])}
