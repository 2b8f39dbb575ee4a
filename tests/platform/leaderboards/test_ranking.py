"""The rank arithmetic against its definition: 1 + the number of entries clearly ahead."""

from hypothesis import given, settings
from hypothesis import strategies as st

from leaderboards.selectors import Ranking

entry = st.one_of(
    st.tuples(st.sampled_from([0.0, 0.25, 0.5, 0.75]), st.none(), st.none()),
    st.tuples(st.just(1.0), st.floats(0.1, 3.0), st.floats(0.0, 0.5)).map(lambda t: (t[0], t[1], t[1] + t[2])),
)


def clearly_ahead(a, b) -> bool:
    if a[0] != b[0]:
        return a[0] > b[0]
    return a[0] >= 1.0 and a[2] < b[1]  # a's interval ends below b's


@settings(max_examples=300, deadline=None)
@given(st.lists(entry, min_size=1, max_size=40))
def test_ranks_and_shared_ranks_match_the_definition(entries):
    histogram = {}
    for score, _, _ in entries:
        histogram[score] = histogram.get(score, 0) + 1
    full = [e for e in entries if e[0] >= 1.0]
    ranking = Ranking(histogram, [e[1] for e in full], [e[2] for e in full])
    expected = [1 + sum(clearly_ahead(other, e) for other in entries) for e in entries]
    for e, rank in zip(entries, expected, strict=True):
        got_rank, got_shared = ranking.rank(e[0], e[1])
        assert got_rank == rank
        assert got_shared == (expected.count(rank) > 1)
    # Listed by score, then by the interval's low end, ranks never go down.
    ordered = sorted(entries, key=lambda e: (-e[0], e[1] if e[1] is not None else 0))
    ranks = [ranking.rank(e[0], e[1])[0] for e in ordered]
    assert ranks == sorted(ranks)
