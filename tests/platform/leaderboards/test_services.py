"""Pooling every counted grading of one code (red team round 3: resubmitting the same code until
a lucky grading, then stopping, made the luckiest grading the entry's)."""

import pytest
from django.urls import reverse
from hypothesis import given, settings
from hypothesis import strategies as st

from leaderboards.models import POOL_SIZE, Entry, Verification
from leaderboards.selectors import exercise_board
from leaderboards.services import pooled
from leaderboards.verification import verification_run
from tests.platform import classroom as make
from tests.platform.leaderboards.test_verification import injected

measurement = st.tuples(st.floats(0.05, 0.5), st.floats(0.1, 5.0), st.floats(0.0, 0.5)).map(
    lambda t: [t[1], t[1] * (1 - t[0]), t[1] * (1 + t[2])]
)


def test_the_pool_counts_by_its_upper_median():
    one = [1.0, 0.8, 1.25]
    assert pooled([one]) == (1.0, 0.8, 1.25)
    # Of two, the slower middle value: a second draw of one code never gains by luck alone.
    assert pooled([one, [0.6, 0.48, 0.75]]) == (1.0, 0.8, 1.25)
    assert pooled([one, [0.6, 0.48, 0.75], [0.9, 0.7, 1.1]]) == (0.9, 0.7, 1.1)


@settings(max_examples=200, deadline=None)
@given(st.lists(measurement, min_size=1, max_size=20), measurement)
def test_one_more_draw_moves_the_median_by_one_place_at_most_and_the_interval_holds_it(pool, draw):
    ratio, low, high = pooled([*pool, draw])
    assert low <= ratio <= high
    before = sorted(m[0] for m in pool)
    assert ratio >= before[(len(pool) - 1) // 2]  # however lucky the draw
    if len(pool) >= 2:
        assert ratio <= before[(len(pool) + 1) // 2]  # however unlucky


@pytest.mark.django_db
def test_the_same_code_pools_other_code_starts_afresh_and_a_partial_grading_keeps_the_pool():
    ex = make.exercise()
    student = make.user()
    code = "def f():\n    return 1\n"
    for ratio in (1.0, 1.1, 0.9):
        make.graded(student, ex, ratio=ratio, code=code)
    assert (Entry.objects.get().ratio, len(Entry.objects.get().pool)) == (pytest.approx(1.0), 3)
    make.graded(student, ex, score=0.5, code=code)  # the same code, this time not accepted
    entry = Entry.objects.get()
    assert (entry.score, entry.ratio, len(entry.pool)) == (0.5, None, 3)  # its latest verdict, pool kept
    make.graded(student, ex, ratio=0.5, code=code)  # accepted again: a fourth draw, not a fresh start
    entry = Entry.objects.get()
    assert (entry.score, entry.ratio, len(entry.pool)) == (1.0, pytest.approx(1.0), 4)
    make.graded(student, ex, ratio=0.6, code="def g():\n    return 1\n")  # other code, clearly faster
    entry = Entry.objects.get()
    assert (entry.ratio, len(entry.pool)) == (pytest.approx(0.6), 1)


@pytest.mark.django_db
def test_the_pool_keeps_the_latest_gradings_only():
    ex = make.exercise()
    student = make.user()
    for i in range(POOL_SIZE + 3):
        make.graded(student, ex, ratio=0.5 if i < 3 else 2.0, code="same")
    entry = Entry.objects.get()
    assert len(entry.pool) == POOL_SIZE and entry.ratio == pytest.approx(2.0)


@pytest.mark.django_db
def test_a_new_version_starts_a_new_pool():
    ex = make.exercise()
    student = make.user()
    make.graded(student, ex, ratio=1.0, code="same")
    make.graded(student, ex, ratio=1.0, code="same")
    make.version_add(ex)
    make.graded(student, ex, ratio=3.0, code="same")
    entry = Entry.objects.get()
    assert (entry.exercise_version_id, entry.ratio, len(entry.pool)) == (ex.current_version_id, pytest.approx(3.0), 1)


@pytest.mark.django_db
def test_a_remeasurement_is_shown_as_it_came_and_pooled_for_the_next_grading(settings, monkeypatch, client):
    settings.LEADERBOARD_VERIFY_TOP = 2
    ex = make.exercise()
    student = make.user(pseudonym="runner")
    make.graded(student, ex, ratio=1.0, code="same")
    make.graded(student, ex, ratio=1.2, code="same")
    injected(monkeypatch, {student.id: ("ACCEPTED", (1.1, 1.0, 1.2))})
    verification_run(Verification.objects.get().id, sandbox=object())
    entry = Entry.objects.get()
    assert (entry.ratio, len(entry.pool)) == (pytest.approx(1.1), 3)  # the session's numbers, on the board
    assert exercise_board(ex, viewer=student).rows[0].gradings == 1  # a session's, not a pool's median
    sub = make.graded(student, ex, ratio=0.5, interval=(0.4, 0.6), code="same")  # lucky, once more
    entry = Entry.objects.get()
    assert (entry.ratio, len(entry.pool)) == (pytest.approx(1.1), 4)  # 0.5, 1.0, 1.1, 1.2: the upper median

    # The verdict page says what this grading measured, and where the code counts on the board.
    client.force_login(student)
    verdict = client.get(reverse("submissions:status", args=[sub.pk])).content.decode()
    assert "<strong>0.50× (0.40–0.60)</strong>" in verdict
    line = client.get(reverse("leaderboards:your_rank", args=[ex.slug]) + f"?submission={sub.pk}").content.decode()
    assert "<strong>1.1× (1.0–1.2)</strong>, the median of your 4 gradings of that code" in line
    board = client.get(reverse("leaderboards:exercise", args=[ex.slug])).content.decode()
    assert "1.1× <span class=\"note\">(1.0–1.2)</span>" in board and "4 gradings" in board
