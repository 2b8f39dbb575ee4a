ELEMENTWISE = {"add", "sub", "mul", "div", "neg", "exp", "tanh", "relu"}


def fuse(graph):
    """Group the graph's ops into kernels; return the kernels (lists of node names) in run order."""
    kernels = []
    for node in graph["nodes"]:
        if node["op"] != "input":
            kernels.append([node["name"]])  # one kernel per op: correct, but nothing is fused yet
    return kernels
