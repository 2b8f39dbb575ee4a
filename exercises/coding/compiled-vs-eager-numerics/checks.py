"""Checks for compiled-vs-eager-numerics: accept what a compiler may legitimately change, reject the rest.

Every case is the row sums of a random matrix, computed three ways: eager (one running sum in
the input dtype), "compiled" (one of four variants below) and the float64 answer. The cases
are clear-cut: an acceptable result is at most about as far from the float64 answer as eager
is; an unacceptable one is at least fifty times farther.
"""
import numpy as np

from grader.harness import check, equal, fail, localize


def row_sums(rng, kind, dtype, rows, n):
    """(eager, compiled, gold, should_agree) for the row sums of a random matrix, as a compiler might get them."""
    x = rng.normal(size=(rows, n)) + 3.0  # an offset, so rounding errors pile up in a long sum
    low = x.astype(dtype)
    gold = low.astype(np.float64).sum(axis=1)
    eager = np.cumsum(low, axis=1, dtype=dtype)[:, -1]  # eager: one running sum, in the input's precision
    if kind == "reordered":  # blocked partial sums, as a fused kernel adds them
        compiled = low.reshape(rows, -1, 16).sum(axis=2, dtype=dtype).sum(axis=1, dtype=dtype)
    elif kind == "upcast":  # accumulated in float32, rounded once at the end
        compiled = low.astype(np.float32).sum(axis=1).astype(dtype)
    elif kind == "downcast":  # a float32 program that silently ran in float16
        compiled = np.cumsum(low.astype(np.float16), axis=1, dtype=np.float16)[:, -1].astype(dtype)
    else:  # "bug": one row added twice (an accumulator that was not reset)
        compiled = low.astype(np.float32).sum(axis=1).astype(dtype)
        compiled[int(rng.integers(rows))] *= 2
    return eager, compiled, gold, kind in ("reordered", "upcast")


def judge(student, eager, compiled, gold, should, what):
    got = student.agrees(eager, compiled, gold)
    if not isinstance(got, bool):
        fail({"en": "{what}: return True or False, got `{got!r:.60}`",
              "zh-hans": "{what}：应返回 True 或 False，实际返回 `{got!r:.60}`"}, what=what, got=got)
    equal(got, should, what=what)


def named(rng, kind, dtype, n):
    eager, compiled, gold, should = row_sums(rng, kind, dtype, 8, n)
    what = localize({"en": "`agrees()` for {kind} row sums of 8x{n} {dtype} values",
                     "zh-hans": "对 8x{n} 个 {dtype} 值做{kind}行求和时的 `agrees()`"},
                    kind=KINDS[kind], n=n, dtype=np.dtype(dtype).name)
    return eager, compiled, gold, should, what


# How each kind of row sum is named in a message.
KINDS = {
    "reordered": {"en": "reordered", "zh-hans": "改变顺序的"},
    "upcast": {"en": "upcast", "zh-hans": "提升精度的"},
    "downcast": {"en": "downcast", "zh-hans": "降低精度的"},
    "bug": {"en": "buggy", "zh-hans": "有错误的"},
}


@check(points=2, title={"en": "A reordered sum agrees", "zh-hans": "改变求和顺序后判为一致"})
def a_reordered_sum_agrees(student, reference, rng):
    eager, compiled, gold, should, what = named(np.random.default_rng(1), "reordered", np.float32, 1024)
    judge(student, eager, compiled, gold, should, what)


@check(points=2, title={"en": "A more accurate half-precision sum agrees", "zh-hans": "更精确的半精度求和判为一致"})
def a_more_accurate_half_precision_sum_agrees(student, reference, rng):
    eager, compiled, gold, should, what = named(np.random.default_rng(2), "upcast", np.float16, 256)
    judge(student, eager, compiled, gold, should, what)


@check(points=2, title={"en": "A silent drop to half precision does not", "zh-hans": "悄悄降为半精度则判为不一致"})
def a_silent_drop_to_half_precision_does_not(student, reference, rng):
    eager, compiled, gold, should, what = named(np.random.default_rng(3), "downcast", np.float32, 1024)
    judge(student, eager, compiled, gold, should, what)


@check(points=1, title={"en": "A wrong row does not", "zh-hans": "有一行错误则判为不一致"})
def a_wrong_row_does_not(student, reference, rng):
    eager, compiled, gold, should, what = named(np.random.default_rng(4), "bug", np.float16, 64)
    judge(student, eager, compiled, gold, should, what)


@check(points=1, title={"en": "NaN where the answer is finite does not", "zh-hans": "应为有限值处出现 NaN 则判为不一致"})
def nan_where_the_answer_is_finite_does_not(student, reference, rng):
    eager, compiled, gold, _, _ = named(np.random.default_rng(5), "reordered", np.float32, 64)
    compiled = compiled.copy()
    compiled[3] = np.nan
    judge(student, eager, compiled, gold, False, {"en": "`agrees()` when one compiled row sum is NaN",
                                                     "zh-hans": "编译结果中有一行的和为 NaN 时的 `agrees()`"})


@check(points=4, title={"en": "Random cases", "zh-hans": "随机用例"})
def random_cases(student, reference, rng):
    for _ in range(6):
        for kind, dtype in (("reordered", np.float32), ("upcast", np.float32), ("downcast", np.float32), ("bug", np.float32),
                            ("reordered", np.float16), ("upcast", np.float16), ("bug", np.float16)):
            n = int(rng.choice([64, 256, 1024] if dtype == np.float16 else [64, 256, 1024, 4096]))
            judge(student, *named(rng, kind, dtype, n))
