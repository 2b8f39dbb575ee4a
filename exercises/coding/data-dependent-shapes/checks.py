"""Checks for data-dependent-shapes: the same statistics as the per-row loop, captured by
torch.compile as one graph.

No count is asked of the student's process (its torch, its worker and any probe are its own
to patch). It sends the graph ``torch.compile(masked_stats, fullgraph=True)`` captures with
torch.compile's default settings (a graph break fails it) as data; the trusted side refuses
an operator whose output size depends on the data (``nonzero`` and its kin) and runs that one
graph on a matrix the student never saw (grader/harness/graphs.py). The exercise's rules keep
the student's code away from torch.compile and torch._dynamo, which the capture uses.
"""
from grader.harness import check, close, fail, localize, tensor
from grader.harness.graphs import exported, run_graph


def same(student, reference, rng, x, threshold, what):
    x = tensor(x)
    close(list(student.masked_stats(x, threshold)), list(reference.masked_stats(x, threshold)),
          what=localize({"en": "{what}: (count, mean, max)", "zh-hans": "{what}：(count, mean, max)"}, what=what))
    found = exported(student, "masked_stats", x, threshold)
    if "error" in found:
        fail({"en": "{what}: `torch.compile(masked_stats, fullgraph=True)` found a graph break: {error}",
              "zh-hans": "{what}：`torch.compile(masked_stats, fullgraph=True)` 发现了图中断：{error}"},
             what=what, error=found["error"])
    # A matrix the student never saw, with the case's pattern: each entry moved away from or
    # towards the threshold, never across it, so the same entries count.
    fresh = tensor(threshold + (x - threshold) * rng.uniform(0.5, 1.5, size=x.shape))
    close(run_graph(reference, found["graph"], [fresh]), list(reference.masked_stats(fresh, threshold)),
          what=localize({"en": "{what}: the compiled (count, mean, max) of your graph, run by the judge on a new matrix",
                         "zh-hans": "{what}：评测方在新矩阵上运行你的图得到的编译后 (count, mean, max)"}, what=what))


@check(points=2, title={"en": "A small matrix", "zh-hans": "一个小矩阵"})
def a_small_matrix(student, reference, rng):
    x = [[0.5, 2.0, -1.0, 3.0], [1.5, 1.2, 0.0, -4.0], [-2.0, 0.9, 4.5, 1.1]]
    same(student, reference, rng, x, 1.0, {"en": "`masked_stats(x, 1.0)` of a 3x4 matrix",
                                         "zh-hans": "对 3x4 矩阵的 `masked_stats(x, 1.0)`"})


@check(points=2, title={"en": "A row with nothing above the threshold", "zh-hans": "某一行没有超过阈值的元素"})
def a_row_with_nothing_above(student, reference, rng):
    x = [[0.1, 0.2, 0.3], [5.0, -5.0, 6.0]]
    same(student, reference, rng, x, 1.0, {
        "en": "`masked_stats(x, 1.0)` where the first row has nothing above 1.0",
        "zh-hans": "第一行没有大于 1.0 的元素时的 `masked_stats(x, 1.0)`"})


@check(points=3, title={"en": "Random matrices", "zh-hans": "随机矩阵"})
def random_matrices(student, reference, rng):
    for rows, cols in ((1, 1), (6, 9), (40, 33)):
        threshold = float(rng.normal())
        same(student, reference, rng, rng.normal(size=(rows, cols)) * 2.0, threshold, localize(
            {"en": "a random {rows}x{cols} matrix", "zh-hans": "随机的 {rows}x{cols} 矩阵"}, rows=rows, cols=cols))


@check(points=1, title={"en": "Every entry above, or none", "zh-hans": "全部超过阈值或全都没有"})
def every_entry_above_or_none(student, reference, rng):
    x = rng.normal(size=(5, 7))
    same(student, reference, rng, x, -100.0, {"en": "a threshold below every entry", "zh-hans": "低于所有元素的阈值"})
    same(student, reference, rng, x, 100.0, {"en": "a threshold above every entry", "zh-hans": "高于所有元素的阈值"})
