"""Checks for memory-planner: no two live values overlap, and the arena is about as small as the reference's."""
from grader.harness import as_code, check, fail, localize

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
        fail({"en": "{what}: `plan_memory()` must return a dict of offsets, got `{offsets!r:.80}`",
              "zh-hans": "{what}：`plan_memory()` 必须返回一个由偏移量组成的 dict，实际返回 `{offsets!r:.80}`"},
             what=what, offsets=offsets)
    for name in sizes:
        offset = offsets.get(name)
        if type(offset) is not int or offset < 0:
            fail({"en": "{what}: `{name!r}` needs a whole-number offset >= 0, got `{offset!r}`",
                  "zh-hans": "{what}：`{name!r}` 需要一个 >= 0 的整数偏移量，实际为 `{offset!r}`"},
                 what=what, name=name, offset=offset)
    extra = sorted(set(offsets) - set(sizes))
    if extra:
        fail({"en": "{what}: `{name!r}` is a graph input (or not a node) and must not be planned",
              "zh-hans": "{what}：`{name!r}` 是计算图的输入（或不是节点），不能为它分配内存"}, what=what, name=extra[0])
    spans = spans_of(graph)
    names = list(sizes)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            live_together = spans[a][0] <= spans[b][1] and spans[b][0] <= spans[a][1]
            overlap = offsets[a] < offsets[b] + sizes[b] and offsets[b] < offsets[a] + sizes[a]
            if live_together and overlap:
                fail({"en": "{what}: `{a!r}` (steps {a_from}-{a_to}, bytes {a_start}-{a_end}) and "
                            "`{b!r}` (steps {b_from}-{b_to}, bytes {b_start}-{b_end}) are alive at the same time and share memory",
                      "zh-hans": "{what}：`{a!r}`（第 {a_from}-{a_to} 步，字节 {a_start}-{a_end}）与 "
                                 "`{b!r}`（第 {b_from}-{b_to} 步，字节 {b_start}-{b_end}）同时存活，却共用了内存"},
                     what=what, a=a, b=b, a_from=spans[a][0], a_to=spans[a][1], a_start=offsets[a], a_end=offsets[a] + sizes[a],
                     b_from=spans[b][0], b_to=spans[b][1], b_start=offsets[b], b_end=offsets[b] + sizes[b])


def compare(student, reference, graph, what):
    got = student.plan_memory(graph)
    valid(graph, got, what)
    mine, theirs = arena(graph, got), arena(graph, reference.plan_memory(graph))
    bound = peak_alive(graph)
    if mine > SLACK * theirs and mine > BOUND * bound:
        fail({"en": "{what}: your arena needs {mine} bytes; the reference planner needs {theirs}, and at most {bound} bytes "
                    "are ever alive at once (allowed: {slack:g}x the reference or {peak:g}x that peak)",
              "zh-hans": "{what}：你的内存区需要 {mine} 字节；参考规划器需要 {theirs} 字节，而任一时刻同时存活的最多 {bound} 字节"
                         "（允许：参考的 {slack:g} 倍，或该峰值的 {peak:g} 倍）"},
             what=what, mine=mine, theirs=theirs, bound=bound, slack=SLACK, peak=BOUND)


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
    compare(student, reference, graph, {"en": "a chain of eight 1 KiB ops", "zh-hans": "由八个 1 KiB 运算组成的链"})
    got = student.plan_memory(graph)
    if arena(graph, got) > 2048:
        fail({"en": "a chain of eight 1 KiB ops: only two values are ever alive at once, so 2048 bytes suffice; yours needs {n}",
              "zh-hans": "由八个 1 KiB 运算组成的链：任一时刻最多只有两个值存活，所以 2048 字节就够了；你的需要 {n} 字节"},
             n=arena(graph, got))


@check(points=1, title={"en": "An op never writes over its own input", "zh-hans": "算子绝不覆盖自己的输入"})
def an_op_never_writes_over_its_own_input(student, reference, rng):
    graph = chain([512, 512])
    compare(student, reference, graph, as_code("x -> t0 -> t1"))


@check(points=1, title={"en": "Outputs stay alive to the end", "zh-hans": "输出一直保留到最后"})
def outputs_stay_alive_to_the_end(student, reference, rng):
    graph = chain([256, 256, 256, 256], outputs=["t0", "t3"])
    compare(student, reference, graph, {"en": "a chain whose first op is also an output",
                                        "zh-hans": "第一个运算同时也是输出的链"})


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
    compare(student, reference, graph, as_code("y = f(f(f(f(h)))) + h"))


@check(points=3, title={"en": "Random graphs", "zh-hans": "随机计算图"})
def random_graphs(student, reference, rng):
    for size in (10, 40, 120):
        compare(student, reference, random_graph(rng, size), localize(
            {"en": "a random graph of {size} ops", "zh-hans": "有 {size} 个运算的随机计算图"}, size=size))


@check(points=1, title={"en": "Mixed sizes reuse the gaps", "zh-hans": "大小不一的张量复用空隙"})
def mixed_sizes_reuse_gaps(student, reference, rng):
    sizes = [int(s) for s in rng.choice([128, 4096, 256, 2048, 512], size=30)]
    compare(student, reference, chain(sizes), {"en": "a chain of 30 ops of mixed sizes", "zh-hans": "由 30 个大小不一的运算组成的链"})
