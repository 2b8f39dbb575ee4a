"""Checks for static-while-loop: a data-dependent loop built from the static engine's ops, with
values, step counts and gradients against the reference.

BUILD runs inside each program: it builds a graph with one float64 placeholder and calls the
program's while_loop, and sends the graph back as data. The trusted side rebuilds it with the
engine, adds the gradient of sum(final state) itself, compiles and runs it
(grader.harness.engine_graphs): the student's process never runs the graph that is judged, so
nothing it changes in its own engine answers for the graph.
"""
import numpy as np

from grader.harness import check, close, fn, localize, run_in
from grader.harness.engine_graphs import ENCODE_SOURCE, run_engine_graph

BUILD_SOURCE = ENCODE_SOURCE + '''
def build(shape, cond_source, body_source, max_iters):
    import sys
    from grader.engines import F, Graph
    program = sys.modules.get("submission") or sys.modules["solution"]
    graph = Graph()
    placeholder = graph.placeholder(shape, "float64", name="x")
    scope = {"F": F}
    final, steps = program.while_loop(eval(cond_source, scope), eval(body_source, scope), placeholder, max_iters)
    return encode(graph, [final, steps])
'''
BUILD = fn("lambda *a: (lambda ns: (exec(" + repr(BUILD_SOURCE) + ", ns), ns['build'](*a))[1])({})")

HALVE = ("lambda v: v > 1.0", "lambda v: v * 0.5")
NEWTON = ("lambda v: v * v > 2.0 + 1e-9", "lambda v: 0.5 * (v + 2.0 / v)")  # sqrt(2) from above
BOUNCE = ("lambda v: v < 3.0", "lambda v: v * -2.0")


def same(student, reference, loop, x, max_iters, what):
    x = np.asarray(x, dtype=np.float64)
    got = dict(zip(("final", "steps", "grad"), run_engine_graph(
        reference, run_in(student, BUILD, list(x.shape), loop[0], loop[1], max_iters), {"x": x}, grad=True)))
    want = dict(zip(("final", "steps", "grad"), run_engine_graph(
        reference, run_in(reference, BUILD, list(x.shape), loop[0], loop[1], max_iters), {"x": x}, grad=True)))
    close(got["final"], want["final"], what=localize({"en": "{what}: the final state", "zh-hans": "{what}：最终状态"}, what=what))
    close(got["steps"], want["steps"], what=localize(
        {"en": "{what}: the number of steps each element took", "zh-hans": "{what}：每个元素走过的步数"}, what=what))
    close(got["grad"], want["grad"], what=localize(
        {"en": "{what}: the gradient of the final state's sum with respect to `x`", "zh-hans": "{what}：最终状态之和对 `x` 的梯度"},
        what=what))


@check(points=2, title={"en": "Halves until at most one", "zh-hans": "不断减半直到不超过 1"})
def halves_until_at_most_one(student, reference, rng):
    same(student, reference, HALVE, [0.5, 3.0, 9.0, 1.0, 64.0], 10, {
        "en": "while v > 1: v *= 0.5, from [0.5, 3, 9, 1, 64]", "zh-hans": "while v > 1: v *= 0.5，初值 [0.5, 3, 9, 1, 64]"})


@check(points=2, title={"en": "An element that never starts", "zh-hans": "一开始就不满足条件的元素"})
def an_element_that_never_starts(student, reference, rng):
    same(student, reference, BOUNCE, [1.0, 5.0, -4.0], 6, {
        "en": "while v < 3: v *= -2, from [1, 5, -4]", "zh-hans": "while v < 3: v *= -2，初值 [1, 5, -4]"})


@check(points=1, title={"en": "Stops at max_iters", "zh-hans": "到 max_iters 时停止"})
def stops_at_max_iters(student, reference, rng):
    same(student, reference, HALVE, [1e6, 2.0], 4, {
        "en": "while v > 1: v *= 0.5, at most 4 steps, from [1e6, 2]",
        "zh-hans": "while v > 1: v *= 0.5，最多 4 步，初值 [1e6, 2]"})


@check(points=2, title={"en": "Newton iterations converge at different speeds", "zh-hans": "牛顿迭代以不同速度收敛"})
def newton_iterations_converge_at_different_speeds(student, reference, rng):
    # 1.5 converges in 2 steps and 50 needs all 8: the elements never all take the same number
    # of steps, so a loop that runs every element to the end cannot pass by the draw's luck.
    x = np.concatenate([[1.5, 50.0], rng.uniform(1.5, 50.0, size=10)])
    same(student, reference, NEWTON, x, 8, {
        "en": "Newton's iteration for `sqrt(2)` from 1.5, 50 and 10 random starts",
        "zh-hans": "从 1.5、50 和 10 个随机初值出发求 `sqrt(2)` 的牛顿迭代"})


@check(points=2, title={"en": "Random starts and limits", "zh-hans": "随机的初值与上限"})
def random_starts_and_limits(student, reference, rng):
    for loop in (HALVE, BOUNCE):
        for size, max_iters in ((1, 3), (20, 12), (200, 25)):
            x = rng.normal(size=size) * 50.0
            same(student, reference, loop, x, max_iters, localize(
                {"en": "{size} random starts, at most {steps} steps", "zh-hans": "{size} 个随机初值，最多 {steps} 步"},
                size=size, steps=max_iters))


@check(points=1, title={"en": "A matrix of states", "zh-hans": "状态组成的矩阵"})
def a_matrix_of_states(student, reference, rng):
    same(student, reference, HALVE, rng.uniform(0.1, 100.0, size=(3, 4)), 9, {"en": "a 3x4 state", "zh-hans": "3x4 的状态"})
