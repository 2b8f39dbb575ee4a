"""Checks for dynamic-shape-recompiles: one compiled graph serves a whole stream of batch sizes.

The probe runs inside each program: it builds a counting backend (it counts the graphs
torch.compile hands it, the calls that run them, and the graphs whose batch dimension is not
symbolic), passes it to compile_for_stream, feeds the stream, and returns the outputs with the
counts. (The counts are taken in the student's process: the symbolic-shape test refuses the
two fakes found so far, a graph traced by hand and batches padded to one size.)
"""
import numpy as np

from grader.harness import check, close, equal, fail, fn, localize, run_in

PROBE_SOURCE = '''
def probe(model_source, weights, sizes):
    import sys
    program = sys.modules.get("submission") or sys.modules["solution"]
    torch._dynamo.reset()
    counts = {"graphs": 0, "runs": 0, "static": 0}

    def backend(gm, example_inputs):
        counts["graphs"] += 1
        # A graph that serves every batch size has a symbolic batch dimension: Dynamo's fake
        # input with a SymInt for dim 0. A graph traced by hand, or one for a padded size, has none.
        inputs = [node.meta.get("example_value") for node in gm.graph.nodes if node.op == "placeholder"]
        if not any(isinstance(getattr(v, "shape", None), torch.Size) and len(v.shape) > 0
                   and isinstance(v.shape[0], torch.SymInt) for v in inputs):
            counts["static"] += 1

        def forward(*args):
            counts["runs"] += 1
            return gm.forward(*args)
        return forward

    model = eval(model_source, {"torch": torch, "w": torch.as_tensor(weights)})
    run = program.compile_for_stream(model, backend)
    generator = torch.Generator().manual_seed(len(sizes))
    outputs = [run(torch.randn(n, weights.shape[0], generator=generator, dtype=torch.float64)) for n in sizes]
    return {"outputs": outputs, "graphs": counts["graphs"], "runs": counts["runs"], "static": counts["static"]}
'''
PROBE = fn("lambda *a: (lambda ns: (exec(" + repr(PROBE_SOURCE) + ", ns), ns['probe'](*a))[1])({'torch': torch})")

ROWWISE = "lambda x: torch.tanh(x @ w).sum(-1, keepdim=True) * 0.5"
TWO_LAYERS = "lambda x: torch.relu(x @ w) @ w.T + x"


def stream(student, reference, model, weights, sizes, what):
    weights = np.asarray(weights, dtype=np.float64)
    got = run_in(student, PROBE, model, weights, list(sizes))
    want = run_in(reference, PROBE, model, weights, list(sizes))
    close(got["outputs"], want["outputs"], what=localize({"en": "{what}: the outputs", "zh-hans": "{what}：输出"}, what=what))
    if got["graphs"] == 0 or got["runs"] < len(sizes):
        fail({"en": "{what}: only {runs} of {calls} calls ran a graph compiled with the given backend",
              "zh-hans": "{what}：{calls} 次调用中只有 {runs} 次运行了用给定后端编译的图"},
             what=what, runs=got["runs"], calls=len(sizes))
    if got["static"]:
        fail({"en": "{what}: the graph is made for one batch size, not every size: its batch dimension is not "
                    "symbolic (padding to a fixed size, or tracing by hand, gives such a graph)",
              "zh-hans": "{what}：这张图只适用于一种批大小，而不是所有大小：它的批维度不是符号化的"
                         "（填充到固定大小或手工追踪都会得到这样的图）"}, what=what)
    equal(got["graphs"], 1, what=localize(
        {"en": "{what}: the number of graphs compiled", "zh-hans": "{what}：编译出的图的数量"}, what=what))


@check(points=2, title={"en": "Growing batches compile once", "zh-hans": "批大小增长时只编译一次"})
def growing_batches_compile_once(student, reference, rng):
    stream(student, reference, ROWWISE, rng.normal(size=(3, 4)), [4, 5, 6, 9], {"en": "batches of 4, 5, 6 and 9 rows",
                                                                                  "zh-hans": "行数为 4、5、6、9 的批次"})


@check(points=2, title={"en": "A batch of one does not recompile", "zh-hans": "批大小为 1 时不重新编译"})
def a_batch_of_one_does_not_recompile(student, reference, rng):
    stream(student, reference, ROWWISE, rng.normal(size=(3, 4)), [8, 1, 3, 1], {"en": "batches of 8, 1, 3 and 1 rows",
                                                                                  "zh-hans": "行数为 8、1、3、1 的批次"})


@check(points=1, title={"en": "The first batch is a single row", "zh-hans": "第一个批次只有一行"})
def the_first_batch_is_a_single_row(student, reference, rng):
    stream(student, reference, ROWWISE, rng.normal(size=(2, 5)), [1, 2, 7], {"en": "batches of 1, 2 and 7 rows",
                                                                               "zh-hans": "行数为 1、2、7 的批次"})


@check(points=3, title={"en": "A long random stream", "zh-hans": "一长串随机输入"})
def a_long_random_stream(student, reference, rng):
    sizes = [int(n) for n in rng.integers(1, 65, size=25)] + [1]
    stream(student, reference, TWO_LAYERS, rng.normal(size=(6, 6)) * 0.3, sizes, {"en": "25 random batch sizes", "zh-hans": "25 个随机的批大小"})


@check(points=1, title={"en": "Each stream starts afresh", "zh-hans": "每串输入都从头开始"})
def each_stream_starts_afresh(student, reference, rng):
    for sizes in ([2, 3], [5, 1, 17]):
        stream(student, reference, ROWWISE, rng.normal(size=(4, 3)), sizes, localize({"en": "a stream of {sizes}", "zh-hans": "批大小序列 {sizes}"}, sizes=sizes))
