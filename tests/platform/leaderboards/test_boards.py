"""Leaderboards as students and instructors read them: fair ranks, one entry per student and
exercise kept in the verdict transaction, pseudonyms, your position, only the current version."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from grading.models import Submission
from leaderboards.models import Entry, Verification
from leaderboards.selectors import PAGE_SIZE, course_board, exercise_board, stale_progress
from leaderboards.tasks import stale_entries_regrade_task
from tests.platform import classroom as make

pytestmark = pytest.mark.django_db


def labels(board):
    return [(row.name, row.rank_label) for row in board.rows]


def test_overlapping_intervals_share_a_rank_and_clear_ones_order_people():
    ex = make.exercise()
    a, b, c, d, e = (make.user(f"s{i}", pseudonym=f"p{i}") for i in range(5))
    make.graded(a, ex, ratio=0.80, interval=(0.70, 0.90))
    make.graded(b, ex, ratio=0.85, interval=(0.75, 0.95))  # overlaps a: same rank
    make.graded(c, ex, ratio=1.50, interval=(1.40, 1.60))  # clearly slower than both
    make.graded(d, ex, score=0.5)
    make.graded(e, ex, score=0.5)  # equal partial scores share, whatever their speed
    board = exercise_board(ex, viewer=a)
    assert labels(board) == [("p0", "=1"), ("p1", "=1"), ("p2", "3"), ("p3", "=4"), ("p4", "=4")]


def test_one_entry_per_student_kept_in_the_verdict_transaction():
    ex = make.exercise()
    student = make.user()
    first = make.graded(student, ex, score=0.5, code="v1")
    assert Entry.objects.get().submission == first
    better = make.graded(student, ex, ratio=1.2, code="v2")
    make.graded(student, ex, score=0.25, code="v3")  # worse: the best stays
    entry = Entry.objects.get()
    assert (entry.submission, entry.score, entry.ratio) == (better, 1.0, pytest.approx(1.2))
    faster = make.graded(student, ex, ratio=0.9, code="v4")
    assert Entry.objects.get().submission == faster


def test_the_same_code_graded_again_is_pooled_so_a_lucky_draw_is_outvoted():
    ex = make.exercise()
    student = make.user()
    make.graded(student, ex, ratio=1.0, code="def f():\n    return 1\n")
    # The same code (modulo trailing blanks): one more draw of its speed, never a re-draw. Of
    # two, the slower middle one counts, so a lucky second grading gains nothing.
    make.graded(student, ex, ratio=0.5, code="def f():   \r\n    return 1\n\n")
    entry = Entry.objects.get()
    assert (entry.ratio, len(entry.pool)) == (pytest.approx(1.0), 2)
    latest = make.graded(student, ex, ratio=0.9, code="def f():\n    return 1\n")
    entry = Entry.objects.get()
    # The median of three: neither the luckiest (0.5) nor simply the latest.
    assert (entry.submission, entry.ratio, entry.ratio_low, entry.ratio_high) == (
        latest, pytest.approx(0.9), pytest.approx(0.9 * 0.95), pytest.approx(0.9 * 1.05))
    make.graded(student, ex, ratio=0.6, code="def g():\n    return 1\n")  # other code, clearly faster: better
    entry = Entry.objects.get()
    assert (entry.ratio, len(entry.pool)) == (pytest.approx(0.6), 1)  # its own pool
    make.graded(student, ex, ratio=0.95, code="def h():\n    return 1\n")  # other code, slower: not
    assert Entry.objects.get().ratio == pytest.approx(0.6)


def test_the_verdict_page_and_the_board_print_the_same_number_for_the_same_grading(client):
    ex = make.exercise()
    student = make.user(pseudonym="runner")
    sub = make.graded(student, ex, ratio=0.98412, interval=(0.84611, 1.10432))
    client.force_login(student)
    board = client.get(reverse("leaderboards:exercise", args=[ex.slug])).content.decode()
    verdict = client.get(reverse("submissions:status", args=[sub.pk])).content.decode()
    assert "0.98× <span class=\"note\">(0.85–1.1)</span>" in board  # two significant digits
    assert 'id="board-speed"' in verdict and "<strong>0.98× (0.85–1.1)</strong>" in verdict


def test_a_regrade_of_the_entrys_own_submission_replaces_it():
    ex = make.exercise()
    student = make.user()
    sub = make.graded(student, ex, ratio=1.0)
    Submission.objects.filter(pk=sub.pk).update(status=Submission.Status.RUNNING)
    make.verdict_store(sub.pk, {"verdict": "WRONG_ANSWER", "score": 0.0, "checks": [], "perf": None})
    assert Entry.objects.get().score == 0.0


def test_the_geometric_mean_of_the_cases_is_the_performance_ratio():
    ex = make.exercise()
    student = make.user()
    sub = Submission.objects.create(user=student, exercise_version=ex.current_version, code="x", status="running")
    make.verdict_store(
        sub.pk,
        {
            "verdict": "ACCEPTED",
            "score": 1.0,
            "checks": [],
            "perf": {"cases": [{"ratio": 0.5, "interval": [0.25, 1.0]}, {"ratio": 2.0, "interval": [1.0, 4.0]}]},
        },
    )
    entry = Entry.objects.get()
    assert (entry.ratio, entry.ratio_low, entry.ratio_high) == pytest.approx((1.0, 0.5, 2.0))


def test_only_the_current_version_counts_and_stale_entries_are_regraded(django_capture_on_commit_callbacks):
    ex = make.exercise()
    old_timer, newcomer = make.user(pseudonym="old"), make.user(pseudonym="new")
    make.graded(old_timer, ex, ratio=0.5, code="fast")
    with django_capture_on_commit_callbacks(execute=False) as announced:
        v2 = make.version_add(ex)
    assert len(announced) == 1  # the new version sends the stale entries' regrade
    make.graded(newcomer, ex, ratio=1.0)
    assert labels(exercise_board(ex, viewer=newcomer)) == [("new", "1")]
    # A late grading of the old version does not displace a newer entry.
    make.graded(newcomer, ex, ratio=0.1, version=ex.versions.get(number=1))
    assert Entry.objects.get(user=newcomer).exercise_version == v2
    with django_capture_on_commit_callbacks(execute=False) as queued:
        stale_entries_regrade_task(ex.id)
        stale_entries_regrade_task(ex.id)  # redelivered: nothing sent twice
    assert len(queued) == 1  # graded in the background
    resubmitted = Submission.objects.get(user=old_timer, exercise_version=v2)
    assert resubmitted.code == "fast"
    assert stale_progress(ex) == (1, 2)


def test_pseudonyms_hiding_and_real_names_for_the_instructor_only(client):
    ex = make.exercise()
    shy = make.user(
        "shy", pseudonym="quiet-node-1", first_name="Shy", last_name="Student", hide_from_public_boards=True
    )
    loud = make.user("loud", pseudonym="bold-tape-2", first_name="Loud", last_name="Student")
    course = make.course(students=[shy, loud])
    instructor = course.memberships.get(role="instructor").user
    make.graded(shy, ex, ratio=1.0)
    make.graded(loud, ex, ratio=2.0, interval=(1.9, 2.1))
    client.force_login(loud)
    public = client.get(reverse("leaderboards:exercise", args=[ex.slug])).content.decode()
    assert (
        "bold-tape-2" in public
        and "quiet-node-1" not in public
        and "Loud Student" not in public
        and "loud" not in public.split("<main")[1]
    )
    in_course = client.get(reverse("leaderboards:exercise_course", args=[ex.slug, course.pk])).content.decode()
    shy_in_course = course.memberships.get(user=shy).pseudonym  # a name of the course's own
    assert shy_in_course in in_course and "quiet-node-1" not in in_course and "Shy Student" not in in_course
    client.force_login(instructor)
    staff_view = client.get(reverse("leaderboards:exercise_course", args=[ex.slug, course.pk])).content.decode()
    assert "Shy Student" in staff_view and "Loud Student" in staff_view


def test_your_position_shows_when_you_are_past_the_first_page(client):
    ex = make.exercise()
    students = [make.user() for _ in range(PAGE_SIZE + 10)]
    for i, s in enumerate(students):
        make.graded(s, ex, ratio=1.0 + i, interval=(1.0 + i - 0.1, 1.0 + i + 0.1))
    last = students[-1]
    board = exercise_board(ex, viewer=last)
    assert last.id not in [r.user_id for r in board.rows]
    assert (board.you.rank_label, board.your_page) == (str(PAGE_SIZE + 10), 2)
    client.force_login(last)
    page = client.get(reverse("leaderboards:exercise", args=[ex.slug])).content.decode()
    assert "Your position" in page and f"{PAGE_SIZE + 10}</strong> / {PAGE_SIZE + 10}" in page


def test_the_board_polls_for_a_new_best_and_reads_in_few_queries(client):
    ex = make.exercise()
    students = [make.user() for _ in range(30)]
    course = make.course(students=students)
    for i, s in enumerate(students):
        make.graded(s, ex, ratio=1.0 + i / 10)
    client.force_login(students[0])
    for url in (
        reverse("leaderboards:exercise", args=[ex.slug]),
        reverse("leaderboards:exercise_course", args=[ex.slug, course.pk]),
        reverse("leaderboards:course", args=[course.pk]),
    ):
        client.get(url)  # warm the session
        with CaptureQueriesContext(connection) as queries:
            page = client.get(url)
        assert page.status_code == 200 and len(queries) <= 10, [q["sql"] for q in queries]
        partial = client.get(url, HTTP_HX_REQUEST="true").content.decode()
        assert partial.lstrip().startswith('<section class="card board"') and 'hx-trigger="every' in partial
    late = make.user(pseudonym="late-bloomer")
    course.memberships.create(user=late, role="student")
    make.graded(late, ex, ratio=0.1, interval=(0.09, 0.11))
    partial = client.get(reverse("leaderboards:exercise", args=[ex.slug]), HTTP_HX_REQUEST="true").content.decode()
    assert partial.index("late-bloomer") < partial.index(students[0].pseudonym)


def test_the_course_board_ranks_by_total_points_with_ties_shared():
    ex = make.exercise()
    a, b, c = make.user(pseudonym="a"), make.user(pseudonym="b"), make.user(pseudonym="c")
    course = make.course(students=[a, b, c])
    for student in (a, b, c):
        course.memberships.filter(user=student).update(pseudonym=student.pseudonym)
    make.assignment(course, ex, points=10)
    make.graded(a, ex, score=1.0)
    make.graded(b, ex, score=1.0)
    make.graded(c, ex, score=0.5)
    assert labels(course_board(course, viewer=a)) == [("a", "=1"), ("b", "=1"), ("c", "3")]


def test_the_one_query_ranking_agrees_with_the_portable_one(monkeypatch):
    """PostgreSQL reads the histogram and the sorted interval ends in one scan (arrays); other
    databases read them in two queries. Both must rank alike."""
    from leaderboards.selectors import _ranking

    ex = make.exercise()
    for i, (score, ratio) in enumerate([(1.0, 0.8), (1.0, 0.85), (1.0, 1.5), (0.5, None), (0.5, None), (1.0, None)]):
        make.graded(make.user(f"r{i}"), ex, score=score, ratio=ratio)
    entries = Entry.objects.filter(exercise_version_id=ex.current_version_id)
    fast = _ranking(entries)
    monkeypatch.setattr(connection, "vendor", "sqlite")
    portable = _ranking(entries)
    assert (fast.histogram, fast.ratios, fast.reaches) == (portable.histogram, portable.ratios, portable.reaches)
    assert fast.histogram == {1.0: 4, 0.5: 2} and len(fast.ratios) == 3


def test_the_cached_site_ranking_follows_new_bests_hiding_and_the_hidden_viewer(django_assert_max_num_queries):
    """The site-wide ranking is cached between polls; a new best, a re-measured top or a
    student hiding changes it at once, and a student who hides still sees their own rank."""
    ex = make.exercise()
    a, b = make.user(pseudonym="a"), make.user(pseudonym="b")
    make.graded(a, ex, ratio=1.0, interval=(0.9, 1.1))
    assert labels(exercise_board(ex, viewer=a)) == [("a", "1")]
    make.graded(b, ex, ratio=0.5, interval=(0.45, 0.55))  # a new best after the board was read
    board = exercise_board(ex, viewer=a)
    assert (labels(board), board.total, board.you.rank_label) == ([("b", "1"), ("a", "2")], 2, "2")

    b.hide_from_public_boards = True
    b.save(update_fields=["hide_from_public_boards"])
    board = exercise_board(ex, viewer=a)
    assert (labels(board), board.total) == ([("a", "1")], 1)
    mine = exercise_board(ex, viewer=b)  # b hides from others, not from themselves
    assert (labels(mine), mine.total) == ([("b", "1"), ("a", "2")], 2)
    assert exercise_board(ex, viewer=a).total == 1  # b's view did not leak into the cache

    # A re-measured top changes intervals without a new grading: the ranking follows.
    b.hide_from_public_boards = False
    b.save(update_fields=["hide_from_public_boards"])
    assert labels(exercise_board(ex, viewer=a)) == [("b", "1"), ("a", "2")]  # cached again
    batch = Verification.objects.get(exercise_version=ex.current_version)  # asked for by the new bests
    Entry.objects.filter(user=a).update(ratio=0.3, ratio_low=0.28, ratio_high=0.32)
    from grading.jobs import Job, job_store
    from leaderboards.verification import VERIFICATION_JOB, measured_outcome

    Verification.objects.filter(id=batch.id).update(status=Verification.Status.RUNNING)  # as its worker holds it
    batch.refresh_from_db()
    job_store(Job(VERIFICATION_JOB, batch.id, batch.attempts), measured_outcome(batch, [], [], seed=1, reverse=False))
    assert labels(exercise_board(ex, viewer=a)) == [("a", "1"), ("b", "2")]
    with django_assert_max_num_queries(4):  # cached: the verification, the page's rows, no aggregate
        exercise_board(ex, viewer=a)
