"""Checks for vectorise-a-loop: the same softmax as the loop, stable on large inputs, and far faster."""
import numpy as np

from grader.harness import Race, as_code, check, close, localize, perf


@check(points=1, title={"en": "Matches the loop on a small batch", "zh-hans": "小批次上与循环版本结果一致"})
def matches_the_loop_on_a_small_batch(student, reference, rng):
    x = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0], [-1.0, 5.0, 0.5]])
    close(student.softmax(x), reference.softmax_loop(x), what={"en": "softmax of a 3x3 batch", "zh-hans": "3x3 批次的 softmax"})


@check(points=1, title={"en": "Every row sums to one", "zh-hans": "每一行之和为 1"})
def rows_sum_to_one(student, reference, rng):
    x = rng.normal(size=(7, 11))
    got = student.softmax(x)
    close(got, reference.softmax(x), what={"en": "softmax of a 7x11 batch", "zh-hans": "7x11 批次的 softmax"})
    close(np.asarray(got).sum(axis=1), np.ones(7), what={"en": "each row's sum", "zh-hans": "每一行的和"})


@check(points=2, title={"en": "Large logits do not overflow", "zh-hans": "较大的 logits 不会溢出"})
def large_logits_do_not_overflow(student, reference, rng):
    x = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, -1000.0, -999.0]])
    close(student.softmax(x), reference.softmax(x), what=as_code("softmax([[1000, 1001, 1002], [-1000, -1000, -999]])"))


@check(points=1, title={"en": "One row, and one column", "zh-hans": "只有一行，以及只有一列"})
def one_row_and_one_column(student, reference, rng):
    for shape in ((1, 9), (9, 1)):
        x = rng.normal(size=shape) * 4
        close(student.softmax(x), reference.softmax(x), what=localize(
            {"en": "softmax of a {rows}x{cols} batch", "zh-hans": "{rows}x{cols} 批次的 softmax"}, rows=shape[0], cols=shape[1]))


@check(points=2, title={"en": "Random batches", "zh-hans": "随机批次"})
def random_batches(student, reference, rng):
    for rows, cols in ((3, 5), (64, 10), (33, 257)):
        x = rng.normal(size=(rows, cols)) * float(rng.uniform(0.5, 30))
        close(student.softmax(x), reference.softmax(x), what=localize(
            {"en": "softmax of a {rows}x{cols} batch", "zh-hans": "{rows}x{cols} 批次的 softmax"}, rows=rows, cols=cols))


def batches(rng):
    return (rng.normal(size=(512, 32)) * 3,)


def tall_batches(rng):
    """Many short rows: a version that still loops over rows pays its dispatch cost 2048 times
    per call, more than the per-element loop itself spends on four elements a row."""
    return (rng.normal(size=(2048, 4)) * 3,)


@perf(points=2, title={"en": "Far faster than the loop (speed)", "zh-hans": "远快于循环版本（速度）"})
def far_faster_than_the_loop(student, reference, rng):
    return Race(student=student.softmax, reference=reference.softmax, baselines={"loop": reference.softmax_loop},
                inputs=tall_batches)


@perf(points=2, title={"en": "Close to the reference's speed", "zh-hans": "速度接近参考解"})
def close_to_the_reference(student, reference, rng):
    return Race(student=student.softmax, reference=reference.softmax, inputs=batches)
