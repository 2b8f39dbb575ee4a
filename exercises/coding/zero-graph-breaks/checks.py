"""Checks for zero-graph-breaks: the same values as the eager block, captured as one graph.

No count is asked of the student's process (its torch, its worker and any probe are its own
to patch). It sends the graph ``torch.compile(model, fullgraph=True)`` captures (a graph
break fails it) as data; the trusted side runs that one graph on inputs the student never
saw, on both sides of the branch (grader/harness/graphs.py). A graph that
is right on both sides holds the branch as data (``torch.where``), not as Python.
"""
import numpy as np

from grader.harness import check, close, fail, localize
from grader.harness.graphs import exported, run_graph
from grader.harness.wire import TensorArray


def tensor(array):
    """A float32 numpy array that arrives in the program as a torch tensor."""
    out = np.asarray(array, dtype=np.float32).view(TensorArray)
    out.torch_dtype = "float32"
    return out


def inputs(rng, batch, sign):
    x = rng.normal(size=(batch, 8))
    w = rng.normal(size=(8, 4)) * 0.5
    h = x @ w
    if np.sign(h.sum()) != sign:  # choose which side of the branch this case takes
        w = -w
    return tensor(x), tensor(w)


def one_graph(student, reference, rng, batch, sign, what):
    """The student's process sends the one graph torch.compile(fullgraph=True) captures of
    ``model``, as data; the trusted side runs it on fresh inputs on both sides of the branch."""
    x, w = inputs(rng, batch, sign)
    found = exported(student, "model", x, w)
    if "error" in found:
        fail({"en": "{what}: `torch.compile(model, fullgraph=True)` found a graph break: {error}",
              "zh-hans": "{what}：`torch.compile(model, fullgraph=True)` 发现了图中断：{error}"},
             what=what, error=found["error"])
    for fresh_sign in (sign, -sign):
        x, w = inputs(rng, batch, fresh_sign)
        close(run_graph(reference, found["graph"], [x, w]), [reference.model(x, w)], rtol=1e-5, atol=1e-6,
              what=localize({"en": "{what}: your graph, run by the judge on new inputs whose sum is {side}",
                             "zh-hans": "{what}：评测方在和为{side}的新输入上运行你的图"},
                            what=what, side=SIDES[fresh_sign]))


SIDES = {1: {"en": "positive", "zh-hans": "正"}, -1: {"en": "negative", "zh-hans": "负"}}


def same_values(student, reference, rng, batch, sign, what):
    x, w = inputs(rng, batch, sign)
    close(student.model(x, w), reference.model(x, w), rtol=1e-5, atol=1e-6, what=what)


@check(points=1, title={"en": "Same values when the sum is positive", "zh-hans": "和为正时结果一致"})
def same_values_when_the_sum_is_positive(student, reference, rng):
    same_values(student, reference, rng, 16, 1, {"en": "`model(x, w)` where `(x @ w).sum() > 0`",
                                                     "zh-hans": "`(x @ w).sum() > 0` 时的 `model(x, w)`"})


@check(points=1, title={"en": "Same values when the sum is negative", "zh-hans": "和为负时结果一致"})
def same_values_when_the_sum_is_negative(student, reference, rng):
    same_values(student, reference, rng, 16, -1, {"en": "`model(x, w)` where `(x @ w).sum() < 0`",
                                                      "zh-hans": "`(x @ w).sum() < 0` 时的 `model(x, w)`"})


@check(points=4, title={"en": "No graph breaks", "zh-hans": "没有图中断"})
def no_graph_breaks(student, reference, rng):
    one_graph(student, reference, rng, 16, 1, {"en": "`model(x, w)` where `(x @ w).sum() > 0`",
                                                "zh-hans": "`(x @ w).sum() > 0` 时的 `model(x, w)`"})


@check(points=2, title={"en": "Random inputs and batch sizes", "zh-hans": "随机输入与批大小"})
def random_inputs_and_batch_sizes(student, reference, rng):
    for batch in (1, 5, 64):
        for sign in (1, -1):
            same_values(student, reference, rng, batch, sign, localize(
                {"en": "`model(x, w)` on a batch of {batch}", "zh-hans": "批大小为 {batch} 时的 `model(x, w)`"}, batch=batch))


@check(points=1, title={"en": "One graph on the other branch too", "zh-hans": "另一个分支同样只有一张图"})
def one_graph_on_the_other_branch_too(student, reference, rng):
    one_graph(student, reference, rng, 7, -1, {"en": "`model(x, w)` on a batch of 7 where the sum is negative",
                                                "zh-hans": "批大小为 7 且和为负时的 `model(x, w)`"})
