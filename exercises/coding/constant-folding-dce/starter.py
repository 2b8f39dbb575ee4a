def optimize(graph):
    """Return a new graph: constant subexpressions folded, nodes no output needs removed.

    graph = {"nodes": [{"name": ..., "op": ..., "inputs": [...], "value": ...}, ...],
             "outputs": [...]}
    """
    nodes = []
    for node in graph["nodes"]:
        # TODO: a node whose inputs are all constants becomes {"op": "const", "value": ...}
        nodes.append(dict(node))
    # TODO: remove every node that no output depends on
    return {"nodes": nodes, "outputs": list(graph["outputs"])}
