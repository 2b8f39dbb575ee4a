"""The rank arithmetic against its definition: 1 + the number of entries clearly ahead."""

from hypothesis import given, settings
from hypothesis import strategies as st

from leaderboards.selectors import Ranking

# (score, low, ratio, high): a full score is timed, with its ratio inside its interval.
entry = st.one_of(
    st.tuples(st.sampled_from([0.0, 0.25, 0.5, 0.75]), st.none(), st.none(), st.none()),
    st.tuples(st.just(1.0), st.floats(0.1, 3.0), st.floats(0.0, 0.5), st.floats(0.0, 0.5)).map(
        lambda t: (t[0], t[1] / (1 + t[2]), t[1], t[1] * (1 + t[3]))
    ),
)


def clearly_ahead(a, b) -> bool:
    """A higher score; or, between full scores, b's ratio lies beyond a's high end stretched by
    a's own upper half-width again: as if b's interval were as wide as a's and the two did not
    overlap. b's own interval plays no part."""
    if a[0] != b[0]:
        return a[0] > b[0]
    return a[0] >= 1.0 and a[3] * (a[3] / a[2]) < b[2]


def ranking_of(entries) -> Ranking:
    histogram = {}
    for score, *_ in entries:
        histogram[score] = histogram.get(score, 0) + 1
    return Ranking.of(histogram, [(e[2], e[3]) for e in entries if e[0] >= 1.0])


@settings(max_examples=300, deadline=None)
@given(st.lists(entry, min_size=1, max_size=40))
def test_ranks_and_shared_ranks_match_the_definition(entries):
    ranking = ranking_of(entries)
    expected = [1 + sum(clearly_ahead(other, e) for other in entries) for e in entries]
    for e, rank in zip(entries, expected, strict=True):
        got_rank, got_shared = ranking.rank(e[0], e[2])
        assert got_rank == rank
        assert got_shared == (expected.count(rank) > 1)
    # Listed by score, then by the ratio (the board's order), ranks never go down.
    ordered = sorted(entries, key=lambda e: (-e[0], e[2] if e[2] is not None else 0))
    ranks = [ranking.rank(e[0], e[2])[0] for e in ordered]
    assert ranks == sorted(ranks)


@settings(max_examples=200, deadline=None)
@given(st.lists(entry, min_size=1, max_size=20), st.floats(0.1, 3.0), st.floats(0.0, 0.3), st.floats(1.0, 20.0))
def test_a_wider_interval_never_buys_a_place(others, ratio, half, widen):
    """The same median with a wider interval, on either side, never ranks its holder higher, nor
    anyone else lower."""
    narrow = (1.0, ratio / (1 + half), ratio, ratio * (1 + half))
    wide = (1.0, narrow[1] / widen, ratio, narrow[3] * widen)
    before, after = ranking_of([*others, narrow]), ranking_of([*others, wide])
    assert after.rank(1.0, ratio)[0] >= before.rank(1.0, ratio)[0]
    for other in others:
        assert after.rank(other[0], other[2])[0] <= before.rank(other[0], other[2])[0]


def test_a_wide_interval_around_a_slow_median_ranks_behind_a_narrow_fast_one():
    # Red team round 3: slow on most inputs, fast on a few (2.4x, 0.32-2.9), beside 0.98x (0.94-1.01).
    honest, spread = (1.0, 0.94, 0.98, 1.01), (1.0, 0.32, 2.4, 2.9)
    ranking = ranking_of([honest, spread])
    assert ranking.rank(1.0, honest[2]) == (1, False)
    assert ranking.rank(1.0, spread[2]) == (2, False)


def test_two_entries_measured_alike_share_a_rank_while_their_intervals_overlap():
    a, b = (1.0, 0.9, 1.0, 1.1), (1.0, 1.08, 1.2, 1.32)  # overlapping: 1.08 < 1.1
    assert ranking_of([a, b]).rank(1.0, b[2]) == (1, True)
    c = (1.0, 1.14, 1.27, 1.397)  # apart: 1.14 > 1.1
    assert ranking_of([a, c]).rank(1.0, c[2]) == (2, False)


def test_the_hidden_viewers_own_entry_ranks_as_if_it_were_listed():
    others = [(1.0, 0.9, 1.0, 1.1), (1.0, 1.8, 2.0, 2.2), (0.5, None, None, None)]
    mine = (1.0, 1.35, 1.5, 1.8)
    added = ranking_of(others).with_entry(mine[0], mine[2], mine[3])
    together = ranking_of([*others, mine])
    assert (added.histogram, added.ratios, added.reaches) == (together.histogram, together.ratios, together.reaches)
    assert added.rank(1.0, 2.0) == (2, True)  # 1.5 (to 1.8) reaches 2.16: not clearly ahead of 2.0
