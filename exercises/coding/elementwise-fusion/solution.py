"""Reference solution: grow each elementwise kernel backwards through single-use producers."""

ELEMENTWISE = {"add", "sub", "mul", "div", "neg", "exp", "tanh", "relu"}


def fuse(graph):
    nodes = graph["nodes"]
    outputs = set(graph["outputs"])
    consumers = {node["name"]: set() for node in nodes}
    for node in nodes:
        for name in node["inputs"]:
            consumers[name].add(node["name"])
    op = {node["name"]: node["op"] for node in nodes}

    def joins_its_consumer(name):
        users = consumers[name]
        return (
            op[name] in ELEMENTWISE
            and name not in outputs
            and len(users) == 1
            and op[next(iter(users))] in ELEMENTWISE
        )

    kernel_of = {}
    kernels = []
    for node in reversed(nodes):  # consumers first: a producer finds its consumer's kernel ready
        name = node["name"]
        if op[name] == "input":
            continue
        if joins_its_consumer(name):
            kernel = kernel_of[next(iter(consumers[name]))]
        else:
            kernel = []
            kernels.append(kernel)
        kernel.append(name)
        kernel_of[name] = kernel
    # Each kernel was filled consumers-first; flip both lists back into execution order.
    return [list(reversed(kernel)) for kernel in reversed(kernels)]
