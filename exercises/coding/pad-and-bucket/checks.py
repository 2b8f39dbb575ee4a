"""Checks for pad-and-bucket: the least padding under a compile budget, and batches padded to their bucket."""
import numpy as np

from grader.harness import Race, as_code, check, close, equal, fail, localize, perf


def padding(buckets, lengths):
    """Total padding when every length goes to the smallest bucket that holds it."""
    ordered = np.sort(np.asarray(buckets, dtype=np.int64))
    lengths = np.asarray(lengths, dtype=np.int64)
    at = np.searchsorted(ordered, lengths)
    return int((ordered[at] - lengths).sum())


def valid_plan(buckets, lengths, max_shapes, what):
    if not isinstance(buckets, list | tuple) or not buckets:
        fail({"en": "{what}: plan_buckets must return a non-empty list of sizes, got `{buckets!r:.80}`",
              "zh-hans": "{what}：plan_buckets 必须返回一个非空的大小列表，实际返回 `{buckets!r:.80}`"},
             what=what, buckets=buckets)
    if any(isinstance(b, bool) or not isinstance(b, int | np.integer) for b in buckets):
        fail({"en": "{what}: bucket sizes must be ints, got `{buckets!r:.80}`",
              "zh-hans": "{what}：桶的大小必须是 int，实际为 `{buckets!r:.80}`"}, what=what, buckets=list(buckets))
    if list(buckets) != sorted(set(int(b) for b in buckets)):
        fail({"en": "{what}: buckets must be distinct and in increasing order, got `{buckets!r:.80}`",
              "zh-hans": "{what}：各个桶必须互不相同并按升序排列，实际为 `{buckets!r:.80}`"}, what=what, buckets=list(buckets))
    if len(buckets) > max_shapes:
        fail({"en": "{what}: {n} buckets means {n} compiled shapes; the budget is {budget}",
              "zh-hans": "{what}：{n} 个桶意味着要编译 {n} 种形状；上限是 {budget}"},
             what=what, n=len(buckets), budget=max_shapes)
    if int(buckets[-1]) < int(max(lengths)):
        fail({"en": "{what}: the longest sequence ({longest}) fits no bucket (largest {largest})",
              "zh-hans": "{what}：最长的序列（{longest}）放不进任何桶（最大的桶为 {largest}）"},
             what=what, longest=int(max(lengths)), largest=int(buckets[-1]))


def same_padding(student, reference, lengths, max_shapes, what):
    got = student.plan_buckets(lengths, max_shapes)
    valid_plan(got, lengths, max_shapes, what)
    want = reference.plan_buckets(lengths, max_shapes)
    mine, best = padding(got, lengths), padding(want, lengths)
    if mine != best:
        fail({"en": "{what}: your buckets `{buckets!r:.60}` pad {mine} positions; the least possible is {best}",
              "zh-hans": "{what}：你的桶 `{buckets!r:.60}` 填充了 {mine} 个位置；最少可以只填充 {best} 个"},
             what=what, buckets=list(got), mine=mine, best=best)


@check(points=1, title={"en": "One shape pads to the longest", "zh-hans": "只有一种形状时补齐到最长"})
def one_shape_pads_to_the_longest(student, reference, rng):
    same_padding(student, reference, [3, 7, 5, 7, 2], 1, as_code("plan_buckets([3, 7, 5, 7, 2], 1)"))


@check(points=2, title={"en": "Two shapes split where it saves most", "zh-hans": "两种形状在最省的位置切分"})
def two_shapes_split_where_it_saves_most(student, reference, rng):
    lengths = [2, 2, 3, 3, 3, 10, 11, 12, 40]
    same_padding(student, reference, lengths, 2, as_code(f"plan_buckets({lengths}, 2)"))


@check(points=1, title={"en": "A budget larger than the lengths", "zh-hans": "预算大于长度种数"})
def a_budget_larger_than_the_lengths(student, reference, rng):
    lengths = [5, 1, 5, 9]
    same_padding(student, reference, lengths, 8, as_code(f"plan_buckets({lengths}, 8)"))


@check(points=2, title={"en": "Batches are padded to their bucket", "zh-hans": "批次补齐到所属分桶"})
def batches_are_padded_to_their_bucket(student, reference, rng):
    seqs = [[1.0, 2.0], [3.0, 4.0, 5.0, 6.0, 7.0], [8.0], [9.0, 10.0, 11.0]]
    buckets = [2, 4, 8]
    close(student.batch_by_bucket(seqs, buckets), reference.batch_by_bucket(seqs, buckets),
          what=as_code(f"batch_by_bucket({seqs}, {buckets})"))


@check(points=3, title={"en": "Random lengths and budgets", "zh-hans": "随机的长度与预算"})
def random_lengths_and_budgets(student, reference, rng):
    for count, top, max_shapes in ((20, 12, 3), (200, 64, 4), (500, 300, 7)):
        lengths = [int(v) for v in np.minimum(rng.geometric(4.0 / top, size=count), top)]
        same_padding(student, reference, lengths, max_shapes, localize(
            {"en": "{count} random lengths, budget {budget}", "zh-hans": "{count} 个随机长度，上限 {budget}"},
            count=count, budget=max_shapes))


@check(points=1, title={"en": "Skewed lengths", "zh-hans": "分布偏斜的长度"})
def skewed_lengths(student, reference, rng):
    lengths = [1] * 50 + [int(v) for v in rng.integers(90, 100, size=5)] + [500]
    same_padding(student, reference, lengths, 3, {
        "en": "fifty short sequences, a few long ones and one very long",
        "zh-hans": "五十个短序列、几个长序列和一个特别长的序列"})


@check(points=2, title={"en": "Random batches", "zh-hans": "随机批次"})
def random_batches(student, reference, rng):
    buckets = [4, 16, 32]
    seqs = [[float(v) for v in rng.normal(size=int(n))] for n in rng.integers(1, 33, size=25)]
    close(student.batch_by_bucket(seqs, buckets), reference.batch_by_bucket(seqs, buckets),
          what={"en": "batch_by_bucket of 25 random sequences", "zh-hans": "对 25 个随机序列的 batch_by_bucket"})
    equal([m.sum() for _, m in student.batch_by_bucket(seqs, buckets)],
          [m.sum() for _, m in reference.batch_by_bucket(seqs, buckets)], what={"en": "real tokens per bucket", "zh-hans": "每个桶中的真实词元数"})


@perf(points=2, title={"en": "Plans a large corpus (speed)", "zh-hans": "为大语料做规划（速度）"})
def plans_a_large_corpus(student, reference, rng):
    timed = {}  # the judge calls inputs() and then the check for the same pair

    def inputs(rng):
        timed["lengths"] = [int(v) for v in rng.integers(1, 300, size=2000)]
        return timed["lengths"], 6

    def check_padding(got, want):
        valid_plan(got, timed["lengths"], 6, "plan_buckets on 2000 lengths")
        if padding(got, timed["lengths"]) != padding(want, timed["lengths"]):
            fail({"en": "plan_buckets on 2000 lengths: not the least padding", "zh-hans": "对 2000 个长度的 plan_buckets：填充量不是最少"})

    return Race(student=student.plan_buckets, reference=reference.plan_buckets, inputs=inputs, check=check_padding)
