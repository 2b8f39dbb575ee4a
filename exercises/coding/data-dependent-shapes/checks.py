"""Checks for data-dependent-shapes: the same statistics as the per-row loop, captured by
torch.compile as one graph.

The probe runs inside each program: eagerly first, then through torch.compile with its default
settings (set again by the probe, whatever the program set at import) and a backend that
counts graphs (a graph break shows as a second graph). The exercise's rules keep the
student's code away from torch.compile and torch._dynamo, which the probe uses.
"""
from grader.harness import check, close, fail, fn, localize, run_in, tensor

PROBE_SOURCE = '''
def probe(x, threshold):
    import sys
    program = sys.modules.get("submission") or sys.modules["solution"]
    eager = program.masked_stats(x, threshold)
    torch._dynamo.reset()
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    # torch's defaults, whatever the program set at import: with these two on, Dynamo would
    # capture a data-dependent size in one graph, which is what the exercise is about avoiding.
    with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=False, capture_scalar_outputs=False):
        compiled = torch.compile(program.masked_stats, backend=backend)(x, threshold)
    return {"eager": eager, "compiled": compiled, "graphs": len(graphs)}
'''
PROBE = fn("lambda *a: (lambda ns: (exec(" + repr(PROBE_SOURCE) + ", ns), ns['probe'](*a))[1])({'torch': torch})")


def same(student, reference, x, threshold, what):
    x = tensor(x)
    got = run_in(student, PROBE, x, threshold)
    want = run_in(reference, PROBE, x, threshold)
    close(list(got["eager"]), list(want["eager"]), what=localize({"en": "{what}: (count, mean, max)", "zh-hans": "{what}：(count, mean, max)"}, what=what))
    close(list(got["compiled"]), list(want["eager"]), what=localize(
        {"en": "{what}: the compiled (count, mean, max)", "zh-hans": "{what}：编译后的 (count, mean, max)"}, what=what))
    if got["graphs"] != 1:
        fail({"en": "{what}: `torch.compile` captured {graphs} graphs; a graph break splits the function, one graph is the goal",
              "zh-hans": "{what}：`torch.compile` 捕获了 {graphs} 个图；图中断会把函数切开，目标是只有一个图"},
             what=what, graphs=got["graphs"])


@check(points=2, title={"en": "A small matrix", "zh-hans": "一个小矩阵"})
def a_small_matrix(student, reference, rng):
    x = [[0.5, 2.0, -1.0, 3.0], [1.5, 1.2, 0.0, -4.0], [-2.0, 0.9, 4.5, 1.1]]
    same(student, reference, x, 1.0, {"en": "`masked_stats(x, 1.0)` of a 3x4 matrix",
                                         "zh-hans": "对 3x4 矩阵的 `masked_stats(x, 1.0)`"})


@check(points=2, title={"en": "A row with nothing above the threshold", "zh-hans": "某一行没有超过阈值的元素"})
def a_row_with_nothing_above(student, reference, rng):
    x = [[0.1, 0.2, 0.3], [5.0, -5.0, 6.0]]
    same(student, reference, x, 1.0, {
        "en": "`masked_stats(x, 1.0)` where the first row has nothing above 1.0",
        "zh-hans": "第一行没有大于 1.0 的元素时的 `masked_stats(x, 1.0)`"})


@check(points=3, title={"en": "Random matrices", "zh-hans": "随机矩阵"})
def random_matrices(student, reference, rng):
    for rows, cols in ((1, 1), (6, 9), (40, 33)):
        threshold = float(rng.normal())
        same(student, reference, rng.normal(size=(rows, cols)) * 2.0, threshold, localize(
            {"en": "a random {rows}x{cols} matrix", "zh-hans": "随机的 {rows}x{cols} 矩阵"}, rows=rows, cols=cols))


@check(points=1, title={"en": "Every entry above, or none", "zh-hans": "全部超过阈值或全都没有"})
def every_entry_above_or_none(student, reference, rng):
    x = rng.normal(size=(5, 7))
    same(student, reference, x, -100.0, {"en": "a threshold below every entry", "zh-hans": "低于所有元素的阈值"})
    same(student, reference, x, 100.0, {"en": "a threshold above every entry", "zh-hans": "高于所有元素的阈值"})
