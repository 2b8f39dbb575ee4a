"""Checks for dynamic-shape-recompiles: one compiled graph serves a whole stream of batch sizes.

No count is asked of the student's process (its torch, its worker and any probe are its own
to patch: issue 23). The probe there gives compile_for_stream a backend that records every
graph torch.compile hands it, in ATen operators (aot_autograd's trace of Dynamo's graph, its
symbolic sizes as int inputs), and sends the graphs as data with what each input stands for.
The trusted side counts them (exactly one) and runs the one graph itself
(grader/harness/graphs.py) on batches the student never saw, of the stream's sizes and of
others: 1, and more than 64 rows. The models reshape with the batch size
(``reshape(x.shape[0], 2, -1)``), so a graph made for one size (a padded batch, a static
trace, one graph of several kept) fails a shape check or gives the wrong shape at another:
the graph that passes has a symbolic batch dimension.

What this does not prove: that the stream's calls ran that graph. A process can serve the
stream eagerly and send a symbolic graph it compiled (or traced with another tracer) aside,
which is the lesson done by hand; the judge proves the graph, not where the outputs came from.
"""
import numpy as np

from grader.harness import check, close, equal, fail, fn, localize, run_in, tensor
from grader.harness.graphs import ENCODE_SOURCE, run_graph

PROBE_SOURCE = ENCODE_SOURCE + '''
def probe(model_source, weights, sizes):
    import sys
    from torch._dynamo.backends.common import aot_autograd
    program = sys.modules.get("submission") or sys.modules["solution"]
    torch._dynamo.reset()
    w = torch.as_tensor(weights)
    graphs = []

    def capture(graph_module, example_inputs):
        # What each input stands for, so that the judge can feed its own: the weights, the
        # batch, or a symbolic size of one of them ([name, dim]).
        values = [node.meta.get("example_value") for node in graph_module.graph.nodes if node.op == "placeholder"]
        names = ["w" if example is w else "x" for example in example_inputs]
        feeds = []
        for value, name in zip(values, names):
            if isinstance(value, torch.SymInt):
                found = [[names[i], dim] for i, tensor in enumerate(values) if isinstance(tensor, torch.Tensor)
                         for dim, size in enumerate(tensor.shape) if str(size) == str(value)]
                feeds.append(found[0] if found else "unknown")
            else:
                feeds.append(name)
        traced = []
        aot_autograd(fw_compiler=lambda graph, _: traced.append(graph) or graph)(graph_module, example_inputs)
        found = encode_graph(traced[0].graph)
        found["feeds"] = feeds
        return found

    def backend(graph_module, example_inputs):
        try:
            graphs.append(capture(graph_module, example_inputs))
        except Exception as error:
            lines = [line.strip() for line in str(error).splitlines() if line.strip()]
            graphs.append({"error": (type(error).__name__ + ": " + " ".join(lines[:2]))[:300]})
        return graph_module.forward

    model = eval(model_source, {"torch": torch, "w": w})
    run = program.compile_for_stream(model, backend)
    generator = torch.Generator().manual_seed(len(sizes))
    outputs = [run(torch.randn(n, weights.shape[0], generator=generator, dtype=torch.float64)) for n in sizes]
    return {"outputs": outputs, "graphs": graphs}
'''
PROBE = fn("lambda *a: (lambda ns: (exec(" + repr(PROBE_SOURCE) + ", ns), ns['probe'](*a))[1])({'torch': torch})")
EAGER = fn("lambda model, w, x: eval(model, {'torch': torch, 'w': torch.as_tensor(w)})(x)")

# Row-wise models whose reshape takes the batch size: a graph made for one size fails at others.
ROWWISE = "lambda x: torch.tanh(x @ w).reshape(x.shape[0], 2, -1).amax(1) * 0.5"
TWO_LAYERS = "lambda x: (torch.relu(x @ w) @ w.T + x).reshape(x.shape[0], -1, 2).sum(-1)"
UNSEEN = (1, 2, 65, 100)  # sizes the judge runs the graph on besides the stream's; none pads to 64


def stream(student, reference, rng, model, weights, sizes, what):
    weights = np.asarray(weights, dtype=np.float64)
    got = run_in(student, PROBE, model, weights, list(sizes))
    want = run_in(reference, PROBE, model, weights, list(sizes))
    if not isinstance(got, dict):  # the probe's answer was changed in the student's process
        got = {}
    close(got.get("outputs"), want["outputs"],
          what=localize({"en": "{what}: the outputs", "zh-hans": "{what}：输出"}, what=what))
    graphs = got.get("graphs") if isinstance(got.get("graphs"), list) else None
    if not graphs:
        fail({"en": "{what}: no graph was compiled with the given backend", "zh-hans": "{what}：没有用给定后端编译出任何图"},
             what=what)
    for graph in graphs:
        if not isinstance(graph, dict) or "error" in graph:
            error = graph.get("error") if isinstance(graph, dict) else None
            fail({"en": "{what}: a graph handed to the backend could not be read: {error}",
                  "zh-hans": "{what}：交给后端的一张图无法读取：{error}"}, what=what, error=str(error)[:300])
    equal(len(graphs), 1, what=localize(
        {"en": "{what}: the number of graphs compiled", "zh-hans": "{what}：编译出的图的数量"}, what=what))
    serves_every_size(reference, rng, graphs[0], model, weights, sorted(set(sizes) | set(UNSEEN)), what)


def serves_every_size(reference, rng, graph, model, weights, sizes, what):
    """The judge runs the one graph on new batches of each size, and compares with the model."""
    feeds, nodes = graph.get("feeds"), graph.get("graph")
    inputs = sum(1 for node in nodes if isinstance(node, dict) and node.get("op") == "input") if isinstance(
        nodes, list) else -1
    if not isinstance(feeds, list) or len(feeds) != inputs or not all(readable(feed) for feed in feeds):
        fail({"en": "{what}: the inputs of your graph are not ones these checks can feed",
              "zh-hans": "{what}：你的图的输入不是这些检查能提供的"}, what=what)
    for n in sizes:
        x = rng.normal(size=(n, weights.shape[0]))
        given = {"x": x, "w": weights}
        inputs = [tensor(given[feed]) if isinstance(feed, str) else int(given[feed[0]].shape[feed[1]]) for feed in feeds]
        close(run_graph(reference, nodes, inputs, raising_is_wrong=True),
              [run_in(reference, EAGER, model, weights, tensor(x))],
              what=localize({"en": "{what}: your graph, run by the judge on a new batch of {rows} rows",
                             "zh-hans": "{what}：评测方在一个 {rows} 行的新批次上运行你的图"}, what=what, rows=n))


def readable(feed):
    if feed in ("x", "w"):
        return True
    return (isinstance(feed, list) and len(feed) == 2 and feed[0] in ("x", "w")
            and type(feed[1]) is int and 0 <= feed[1] < 2)


@check(points=2, title={"en": "Growing batches compile once", "zh-hans": "批大小增长时只编译一次"})
def growing_batches_compile_once(student, reference, rng):
    stream(student, reference, rng, ROWWISE, rng.normal(size=(3, 4)), [4, 5, 6, 9],
           {"en": "batches of 4, 5, 6 and 9 rows", "zh-hans": "行数为 4、5、6、9 的批次"})


@check(points=2, title={"en": "A batch of one does not recompile", "zh-hans": "批大小为 1 时不重新编译"})
def a_batch_of_one_does_not_recompile(student, reference, rng):
    stream(student, reference, rng, ROWWISE, rng.normal(size=(3, 4)), [8, 1, 3, 1],
           {"en": "batches of 8, 1, 3 and 1 rows", "zh-hans": "行数为 8、1、3、1 的批次"})


@check(points=1, title={"en": "The first batch is a single row", "zh-hans": "第一个批次只有一行"})
def the_first_batch_is_a_single_row(student, reference, rng):
    stream(student, reference, rng, ROWWISE, rng.normal(size=(2, 6)), [1, 2, 7],
           {"en": "batches of 1, 2 and 7 rows", "zh-hans": "行数为 1、2、7 的批次"})


@check(points=3, title={"en": "A long random stream", "zh-hans": "一长串随机输入"})
def a_long_random_stream(student, reference, rng):
    sizes = [int(n) for n in rng.integers(1, 65, size=25)] + [1]
    stream(student, reference, rng, TWO_LAYERS, rng.normal(size=(6, 6)) * 0.3, sizes,
           {"en": "25 random batch sizes", "zh-hans": "25 个随机的批大小"})


@check(points=1, title={"en": "Each stream starts afresh", "zh-hans": "每串输入都从头开始"})
def each_stream_starts_afresh(student, reference, rng):
    for sizes in ([2, 3], [5, 1, 17]):
        stream(student, reference, rng, ROWWISE, rng.normal(size=(4, 2)), sizes,
               localize({"en": "a stream of {sizes}", "zh-hans": "批大小序列 {sizes}"}, sizes=sizes))
