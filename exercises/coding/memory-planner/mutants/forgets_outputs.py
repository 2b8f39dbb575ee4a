# Outputs die at their last use, so a later value may overwrite a result the caller wants.
def lifetimes(graph):
    """name -> (first step, last step) for every planned value; outputs live to the end."""
    steps = {node["name"]: i for i, node in enumerate(graph["nodes"])}
    end = len(graph["nodes"])
    spans = {node["name"]: [i, i] for i, node in enumerate(graph["nodes"]) if node["op"] != "input"}
    for i, node in enumerate(graph["nodes"]):
        for name in node["inputs"]:
            if name in spans:
                spans[name][1] = max(spans[name][1], i)
    for name in graph["outputs"]:
        if name in spans:
            pass
    del steps
    return {name: tuple(span) for name, span in spans.items()}


def plan_memory(graph):
    sizes = {node["name"]: node["bytes"] for node in graph["nodes"] if node["op"] != "input"}
    spans = lifetimes(graph)
    placed = []  # (offset, size, first, last)
    offsets = {}
    for name in sorted(sizes, key=lambda n: (-sizes[n], spans[n][0])):
        first, last = spans[name]
        busy = sorted((o, o + s) for o, s, f, l in placed if f <= last and first <= l)
        offset = 0
        for start, stop in busy:  # the lowest gap that fits
            if offset + sizes[name] <= start:
                break
            offset = max(offset, stop)
        offsets[name] = offset
        placed.append((offset, sizes[name], first, last))
    return offsets
