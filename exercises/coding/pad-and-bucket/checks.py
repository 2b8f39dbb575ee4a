"""Checks for pad-and-bucket: the least padding under a compile budget, and batches padded to their bucket."""
import numpy as np

from grader.harness import Race, check, close, equal, fail, perf


def padding(buckets, lengths):
    """Total padding when every length goes to the smallest bucket that holds it."""
    ordered = np.sort(np.asarray(buckets, dtype=np.int64))
    lengths = np.asarray(lengths, dtype=np.int64)
    at = np.searchsorted(ordered, lengths)
    return int((ordered[at] - lengths).sum())


def valid_plan(buckets, lengths, max_shapes, what):
    if not isinstance(buckets, list | tuple) or not buckets:
        fail(f"{what}: plan_buckets must return a non-empty list of sizes, got {buckets!r:.80}")
    if any(isinstance(b, bool) or not isinstance(b, int | np.integer) for b in buckets):
        fail(f"{what}: bucket sizes must be ints, got {list(buckets)!r:.80}")
    if list(buckets) != sorted(set(int(b) for b in buckets)):
        fail(f"{what}: buckets must be distinct and in increasing order, got {list(buckets)!r:.80}")
    if len(buckets) > max_shapes:
        fail(f"{what}: {len(buckets)} buckets means {len(buckets)} compiled shapes; the budget is {max_shapes}")
    if int(buckets[-1]) < int(max(lengths)):
        fail(f"{what}: the longest sequence ({int(max(lengths))}) fits no bucket (largest {int(buckets[-1])})")


def same_padding(student, reference, lengths, max_shapes, what):
    got = student.plan_buckets(lengths, max_shapes)
    valid_plan(got, lengths, max_shapes, what)
    want = reference.plan_buckets(lengths, max_shapes)
    mine, best = padding(got, lengths), padding(want, lengths)
    if mine != best:
        fail(f"{what}: your buckets {list(got)!r:.60} pad {mine} positions; the least possible is {best}")


@check(points=1)
def one_shape_pads_to_the_longest(student, reference, rng):
    same_padding(student, reference, [3, 7, 5, 7, 2], 1, "plan_buckets([3, 7, 5, 7, 2], 1)")


@check(points=2)
def two_shapes_split_where_it_saves_most(student, reference, rng):
    lengths = [2, 2, 3, 3, 3, 10, 11, 12, 40]
    same_padding(student, reference, lengths, 2, f"plan_buckets({lengths}, 2)")


@check(points=1)
def a_budget_larger_than_the_lengths(student, reference, rng):
    lengths = [5, 1, 5, 9]
    same_padding(student, reference, lengths, 8, f"plan_buckets({lengths}, 8)")


@check(points=2)
def batches_are_padded_to_their_bucket(student, reference, rng):
    seqs = [[1.0, 2.0], [3.0, 4.0, 5.0, 6.0, 7.0], [8.0], [9.0, 10.0, 11.0]]
    buckets = [2, 4, 8]
    close(student.batch_by_bucket(seqs, buckets), reference.batch_by_bucket(seqs, buckets),
          what=f"batch_by_bucket({seqs}, {buckets})")


@check(points=3)
def random_lengths_and_budgets(student, reference, rng):
    for count, top, max_shapes in ((20, 12, 3), (200, 64, 4), (500, 300, 7)):
        lengths = [int(v) for v in np.minimum(rng.geometric(4.0 / top, size=count), top)]
        same_padding(student, reference, lengths, max_shapes, f"{count} random lengths, budget {max_shapes}")


@check(points=1)
def skewed_lengths(student, reference, rng):
    lengths = [1] * 50 + [int(v) for v in rng.integers(90, 100, size=5)] + [500]
    same_padding(student, reference, lengths, 3, "fifty short sequences, a few long ones and one very long")


@check(points=2)
def random_batches(student, reference, rng):
    buckets = [4, 16, 32]
    seqs = [[float(v) for v in rng.normal(size=int(n))] for n in rng.integers(1, 33, size=25)]
    close(student.batch_by_bucket(seqs, buckets), reference.batch_by_bucket(seqs, buckets),
          what="batch_by_bucket of 25 random sequences")
    equal([m.sum() for _, m in student.batch_by_bucket(seqs, buckets)],
          [m.sum() for _, m in reference.batch_by_bucket(seqs, buckets)], what="real tokens per bucket")


@perf(points=2)
def plans_a_large_corpus(student, reference, rng):
    timed = {}  # the judge calls inputs() and then the check for the same pair

    def inputs(rng):
        timed["lengths"] = [int(v) for v in rng.integers(1, 300, size=2000)]
        return timed["lengths"], 6

    def check_padding(got, want):
        valid_plan(got, timed["lengths"], 6, "plan_buckets on 2000 lengths")
        if padding(got, timed["lengths"]) != padding(want, timed["lengths"]):
            fail("plan_buckets on 2000 lengths: not the least padding")

    return Race(student=student.plan_buckets, reference=reference.plan_buckets, inputs=inputs, check=check_padding)
