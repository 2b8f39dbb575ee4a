"""Checks for zero-graph-breaks: the same values as the eager block, and torch._dynamo.explain finds no break.

torch._dynamo.explain must run where the student's function lives, in the student's own
process. The probe is the checks' own code with the worker's torch, not the torch the
student's module names (a module that defines its own ``torch`` with an ``explain`` that
reports no break changes nothing), and it returns the count as plain data.
"""
import numpy as np

from grader.harness import check, close, equal, fail, fn, localize, run_in
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


EXPLAIN_SOURCE = '''
def explain(x, w):
    import sys
    program = sys.modules.get("submission") or sys.modules["solution"]
    torch._dynamo.reset()
    explained = torch._dynamo.explain(program.model)(x, w)
    reasons = [str(r.reason).splitlines()[0][:200] for r in explained.break_reasons[:3]]
    return {"count": int(explained.graph_break_count), "reasons": "; ".join(reasons)}
'''
EXPLAIN = fn("lambda *a: (lambda ns: (exec(" + repr(EXPLAIN_SOURCE) + ", ns), ns['explain'](*a))[1])({'torch': torch})")


def explain(program, x, w):
    """torch._dynamo.explain(model)(x, w), run inside ``program``; returns (break count, report)."""
    found = run_in(program, EXPLAIN, x, w)
    return int(found["count"]), str(found["reasons"])


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
    x, w = inputs(rng, 16, 1)
    count, reasons = explain(student, x, w)
    if count:
        fail({"en": "`torch._dynamo.explain(model)` found {count} graph break(s): {reasons}",
              "zh-hans": "`torch._dynamo.explain(model)` 发现了 {count} 处图中断：{reasons}"}, count=count, reasons=reasons)


@check(points=2, title={"en": "Random inputs and batch sizes", "zh-hans": "随机输入与批大小"})
def random_inputs_and_batch_sizes(student, reference, rng):
    for batch in (1, 5, 64):
        for sign in (1, -1):
            same_values(student, reference, rng, batch, sign, localize(
                {"en": "`model(x, w)` on a batch of {batch}", "zh-hans": "批大小为 {batch} 时的 `model(x, w)`"}, batch=batch))


@check(points=1, title={"en": "One graph on the other branch too", "zh-hans": "另一个分支同样只有一张图"})
def one_graph_on_the_other_branch_too(student, reference, rng):
    x, w = inputs(rng, 7, -1)
    count, reasons = explain(student, x, w)
    equal(count, 0, what=localize(
        {"en": "graph breaks when the sum is negative ({reasons})", "zh-hans": "和为负时的图中断（{reasons}）"}, reasons=reasons))
