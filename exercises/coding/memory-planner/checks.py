"""Checks for memory-planner: no two live values overlap, and the arena is about as small as the reference's."""
from grader.harness import check, fail

SLACK = 1.10  # the arena may be at most 10% larger than the reference planner's...
BOUND = 1.30  # ...or at most 30% above the lower bound: the most bytes ever alive at once


def spans_of(graph):
    end = len(graph["nodes"])
    spans = {n["name"]: [i, i] for i, n in enumerate(graph["nodes"]) if n["op"] != "input"}
    for i, node in enumerate(graph["nodes"]):
        for name in node["inputs"]:
            if name in spans:
                spans[name][1] = max(spans[name][1], i)
    for name in graph["outputs"]:
        spans[name][1] = end
    return spans


def arena(graph, offsets):
    sizes = {n["name"]: n["bytes"] for n in graph["nodes"] if n["op"] != "input"}
    return max((offsets[name] + size for name, size in sizes.items()), default=0)


def valid(graph, offsets, what):
    sizes = {n["name"]: n["bytes"] for n in graph["nodes"] if n["op"] != "input"}
    if not isinstance(offsets, dict):
        fail(f"{what}: plan_memory() must return a dict of offsets, got {offsets!r:.80}")
    for name in sizes:
        offset = offsets.get(name)
        if type(offset) is not int or offset < 0:
            fail(f"{what}: {name!r} needs a whole-number offset >= 0, got {offset!r}")
    extra = sorted(set(offsets) - set(sizes))
    if extra:
        fail(f"{what}: {extra[0]!r} is a graph input (or not a node) and must not be planned")
    spans = spans_of(graph)
    names = list(sizes)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            live_together = spans[a][0] <= spans[b][1] and spans[b][0] <= spans[a][1]
            overlap = offsets[a] < offsets[b] + sizes[b] and offsets[b] < offsets[a] + sizes[a]
            if live_together and overlap:
                fail(
                    f"{what}: {a!r} (steps {spans[a][0]}-{spans[a][1]}, bytes {offsets[a]}-{offsets[a] + sizes[a]}) and "
                    f"{b!r} (steps {spans[b][0]}-{spans[b][1]}, bytes {offsets[b]}-{offsets[b] + sizes[b]}) are alive "
                    "at the same time and share memory"
                )


def compare(student, reference, graph, what):
    got = student.plan_memory(graph)
    valid(graph, got, what)
    mine, theirs = arena(graph, got), arena(graph, reference.plan_memory(graph))
    bound = peak_alive(graph)
    if mine > SLACK * theirs and mine > BOUND * bound:
        fail(
            f"{what}: your arena needs {mine} bytes; the reference planner needs {theirs}, and at most {bound} bytes "
            f"are ever alive at once (allowed: {SLACK:g}x the reference or {BOUND:g}x that peak)"
        )


def peak_alive(graph):
    """The lower bound of any plan: the largest total of values alive at one step."""
    sizes = {n["name"]: n["bytes"] for n in graph["nodes"] if n["op"] != "input"}
    spans = spans_of(graph)
    return max(
        (sum(size for name, size in sizes.items() if spans[name][0] <= step <= spans[name][1]) for step in range(len(graph["nodes"]) + 1)),
        default=0,
    )


def chain(sizes, outputs=None):
    nodes = [{"name": "x", "op": "input", "inputs": [], "bytes": 64}]
    for i, size in enumerate(sizes):
        nodes.append({"name": f"t{i}", "op": "op", "inputs": [nodes[-1]["name"]], "bytes": size})
    return {"nodes": nodes, "outputs": outputs or [nodes[-1]["name"]]}


def random_graph(rng, size):
    nodes = [{"name": f"in{i}", "op": "input", "inputs": [], "bytes": 256} for i in range(2)]
    for i in range(size):
        names = [n["name"] for n in nodes]
        window = names[-4:]
        deps = {str(rng.choice(window))}
        if rng.random() < 0.4:
            deps.add(str(rng.choice(names)))  # a skip connection keeps an old value alive
        size_bytes = int(rng.choice([64, 128, 256, 512, 1024, 4096])) * int(rng.integers(1, 4))
        nodes.append({"name": f"v{i}", "op": "op", "inputs": sorted(deps), "bytes": size_bytes})
    ops = [n["name"] for n in nodes if n["op"] != "input"]
    return {"nodes": nodes, "outputs": sorted({ops[-1], str(rng.choice(ops))})}


@check(points=2, title={"en": "A chain needs only two buffers", "zh-hans": "一条链只需要两块缓冲区"})
def a_chain_needs_two_buffers(student, reference, rng):
    graph = chain([1024] * 8)
    compare(student, reference, graph, "a chain of eight 1 KiB ops")
    got = student.plan_memory(graph)
    if arena(graph, got) > 2048:
        fail(f"a chain of eight 1 KiB ops: only two values are ever alive at once, so 2048 bytes suffice; yours needs {arena(graph, got)}")


@check(points=1, title={"en": "An op never writes over its own input", "zh-hans": "算子绝不覆盖自己的输入"})
def an_op_never_writes_over_its_own_input(student, reference, rng):
    graph = chain([512, 512])
    compare(student, reference, graph, "x -> t0 -> t1")


@check(points=1, title={"en": "Outputs stay alive to the end", "zh-hans": "输出一直保留到最后"})
def outputs_stay_alive_to_the_end(student, reference, rng):
    graph = chain([256, 256, 256, 256], outputs=["t0", "t3"])
    compare(student, reference, graph, "a chain whose first op is also an output")


@check(points=1, title={"en": "A skip connection keeps a value alive", "zh-hans": "跳跃连接让值保持存活"})
def a_skip_connection_keeps_a_value_alive(student, reference, rng):
    graph = {
        "nodes": [
            {"name": "x", "op": "input", "inputs": [], "bytes": 100},
            {"name": "h", "op": "op", "inputs": ["x"], "bytes": 400},
            {"name": "a", "op": "op", "inputs": ["h"], "bytes": 400},
            {"name": "b", "op": "op", "inputs": ["a"], "bytes": 400},
            {"name": "c", "op": "op", "inputs": ["b"], "bytes": 400},
            {"name": "y", "op": "op", "inputs": ["c", "h"], "bytes": 400},
        ],
        "outputs": ["y"],
    }
    compare(student, reference, graph, "y = f(f(f(f(h)))) + h")


@check(points=3, title={"en": "Random graphs", "zh-hans": "随机计算图"})
def random_graphs(student, reference, rng):
    for size in (10, 40, 120):
        compare(student, reference, random_graph(rng, size), f"a random graph of {size} ops")


@check(points=1, title={"en": "Mixed sizes reuse the gaps", "zh-hans": "大小不一的张量复用空隙"})
def mixed_sizes_reuse_gaps(student, reference, rng):
    sizes = [int(s) for s in rng.choice([128, 4096, 256, 2048, 512], size=30)]
    compare(student, reference, chain(sizes), "a chain of 30 ops of mixed sizes")
