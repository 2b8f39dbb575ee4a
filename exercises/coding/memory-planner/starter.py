def plan_memory(graph):
    """Give every computed value an offset in one shared arena; return {name: offset}."""
    offsets, top = {}, 0
    for node in graph["nodes"]:
        if node["op"] == "input":
            continue
        # TODO: reuse the space of values that are no longer needed
        offsets[node["name"]] = top
        top += node["bytes"]
    return offsets
