"""Re-measuring the top of a board in one session: asked for when a new best reaches the top
(debounced) and by beat, run once per batch, graded on Docker in interleaved rounds on one
seed, the new intervals stored together and ranked by the board's rule."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from grader.host.remeasure import rounds_combined
from leaderboards.models import Entry, Verification
from leaderboards.selectors import exercise_board
from leaderboards.services import code_digest
from leaderboards.tasks import verify_top
from leaderboards.verification import (
    VERIFY_TASK,
    reaches_the_top,
    verification_candidates,
    verification_request,
    verification_run,
    verifications_sweep,
)
from testbed.processes import docker_is_up
from tests.platform import classroom as make

pytestmark = pytest.mark.django_db


@pytest.fixture
def top_two(settings):
    settings.LEADERBOARD_VERIFY_TOP = 2
    settings.LEADERBOARD_VERIFY_DEBOUNCE_S = 90


def sent_tasks(callbacks, monkeypatch):
    """Run on-commit callbacks with the broker replaced by a list: (task, args, countdown)."""
    from celery import current_app

    sent = []

    def send_task(name, args=None, kwargs=None, countdown=None, queue=None, **options):  # as Celery calls it
        if not name.startswith("similarity."):  # a stored verdict is also fingerprinted
            sent.append((name, args, queue, countdown))

    monkeypatch.setattr(current_app, "send_task", send_task)
    for callback in callbacks:
        callback()
    return sent


def test_a_new_best_at_the_top_asks_once_for_the_top_to_be_measured_again(
    top_two, django_capture_on_commit_callbacks, monkeypatch
):
    ex = make.exercise()
    a, b, c = make.user(), make.user(), make.user()
    with django_capture_on_commit_callbacks() as callbacks:
        make.graded(a, ex, ratio=1.0)
        make.graded(b, ex, ratio=0.9)  # a second new best while the first request waits: it joins
    pending = Verification.objects.get()
    assert pending.status == Verification.Status.PENDING
    assert sent_tasks(callbacks, monkeypatch) == [(VERIFY_TASK, (pending.id,), "cpu", 90)]  # debounced

    Verification.objects.update(status=Verification.Status.DONE, finished_at=timezone.now())
    with django_capture_on_commit_callbacks() as callbacks:
        make.graded(c, ex, ratio=3.0)  # third of two: not at the top
        make.graded(c, ex, score=0.5, code="worse")  # not a new best
    assert not Verification.objects.filter(status=Verification.Status.PENDING).exists()
    with django_capture_on_commit_callbacks() as callbacks:
        make.graded(c, ex, ratio=0.5, code="faster")  # now first: the top changed
    assert Verification.objects.filter(status=Verification.Status.PENDING).count() == 1
    assert len(sent_tasks(callbacks, monkeypatch)) == 1


def injected(monkeypatch, outcomes):
    """The re-measuring's gradings replaced by outcomes per user: a verdict, with a ratio if accepted."""
    from grader.host import Remeasured

    def remeasure(spec, candidates, sandbox, *, seed, rounds):
        return [
            Remeasured(key, outcomes[Entry.objects.get(id=int(key)).user_id][0],
                       outcomes[Entry.objects.get(id=int(key)).user_id][1], (0,) * rounds, (None,) * rounds, 0.0, 1.0)
            for key, _code in candidates
        ]

    monkeypatch.setattr("leaderboards.verification.remeasure", remeasure)
    monkeypatch.setattr("leaderboards.verification.exercise_version_spec", lambda version: None)


def test_a_failed_remeasurement_takes_the_entry_off_the_ranking_until_it_is_graded_again(
    top_two, monkeypatch, client
):
    ex = make.exercise()
    honest, cheat = make.user(pseudonym="honest"), make.user(pseudonym="cheat")
    make.graded(honest, ex, ratio=1.0, code="honest")
    make.graded(cheat, ex, ratio=0.1, code="raises on the 13th call")
    injected(monkeypatch, {honest.id: ("ACCEPTED", (1.1, 1.0, 1.2)), cheat.id: ("RUNTIME_ERROR", None)})
    batch = Verification.objects.get()
    verification_run(batch.id, sandbox=object())
    batch.refresh_from_db()
    rows = {row["user"]: row for row in batch.candidates}
    assert (rows[cheat.id]["stored"], rows[cheat.id]["withdrawn"]) == (False, True)
    assert (rows[honest.id]["stored"], rows[honest.id]["withdrawn"]) == (True, False)

    board = exercise_board(ex, viewer=cheat)
    assert [r.name for r in board.rows] == ["honest"] and board.total == 1
    assert board.you is None and board.you_withdrawn
    assert [e.user_id for e in verification_candidates(ex.current_version)] == [honest.id]
    client.force_login(cheat)
    for language in ("en", "zh-hans"):
        client.cookies["django_language"] = language
        page = client.get(reverse("leaderboards:exercise", args=[ex.slug]), HTTP_ACCEPT_LANGUAGE=language)
        assert 'id="you-withdrawn"' in page.content.decode()

    make.graded(cheat, ex, ratio=1.3, code="raises on the 13th call")  # graded again: back on, with these numbers
    board = exercise_board(ex, viewer=cheat)
    assert [r.name for r in board.rows] == ["honest", "cheat"] and not board.you_withdrawn
    assert Entry.objects.get(user=cheat).ratio == pytest.approx(1.3)


def test_new_code_on_an_entry_clears_its_verified_mark(top_two):
    ex = make.exercise()
    student = make.user()
    make.graded(student, ex, ratio=1.0)
    batch = Verification.objects.get()
    Entry.objects.update(verification=batch, verified_at=timezone.now())
    make.graded(student, ex, ratio=0.8, code="new code")
    entry = Entry.objects.get()
    assert (entry.verification, entry.verified_at) == (None, None)


def test_a_batch_runs_once_and_a_batch_of_an_old_version_measures_nothing(top_two):
    ex = make.exercise()
    make.graded(make.user(), ex, ratio=1.0)
    batch = Verification.objects.get()
    make.version_add(ex)  # the exercise moved on before the batch ran
    verify_top(batch.id)  # no sandbox is needed to see that
    batch.refresh_from_db()
    assert batch.status == Verification.Status.SUPERSEDED
    assert verification_run(batch.id) is None  # redelivered: taken already, nothing happens
    Verification.objects.filter(id=batch.id).update(status=Verification.Status.RUNNING)
    assert verification_run(batch.id) is None


def test_a_courses_top_is_measured_again_even_when_the_site_top_is_faster(top_two, settings):
    """Site top 2: s0, s1. Course 1 holds the site's third and fourth (s2, c0), course 2 the
    sixth and seventh (d0, d1): every course's first is a candidate before any second."""
    settings.LEADERBOARD_VERIFY_COURSE_TOP, settings.LEADERBOARD_VERIFY_MAX = 2, 4
    ex = make.exercise()
    people = {}
    for name, ratio in [("s0", 0.5), ("s1", 0.6), ("s2", 0.7), ("c0", 0.8), ("x", 0.85), ("d0", 0.9), ("d1", 1.0)]:
        people[name] = make.user(name)
        make.graded(people[name], ex, ratio=ratio)
    first = make.course(students=[people["c0"], people["s2"]])
    second = make.course(students=[people["d0"], people["d1"]])
    make.assignment(first, ex)
    make.assignment(second, ex)
    make.course(students=[people["x"]])  # a course without this exercise: its board is not measured
    chosen = [Entry.objects.get(id=e.id).user.username for e in verification_candidates(ex.current_version)]
    # s2 leads course 1 (c0 is its second); d0 leads course 2; the cap (4) leaves out c0 and d1.
    assert chosen == ["s0", "s1", "s2", "d0"]
    settings.LEADERBOARD_VERIFY_MAX = 10
    chosen = [Entry.objects.get(id=e.id).user.username for e in verification_candidates(ex.current_version)]
    assert chosen == ["s0", "s1", "s2", "c0", "d0", "d1"]

    # A new best reaches the top of its course's board though far from the site's top.
    settings.LEADERBOARD_VERIFY_COURSE_TOP = 1
    assert reaches_the_top(Entry.objects.get(user=people["d0"]))  # first in course 2
    assert not reaches_the_top(Entry.objects.get(user=people["d1"]))  # second there, seventh on the site
    assert not reaches_the_top(Entry.objects.get(user=people["x"]))  # its course does not set the exercise


def test_beat_asks_for_due_boards_and_resends_lost_batches(top_two, django_capture_on_commit_callbacks, monkeypatch):
    ex, alone = make.exercise(), make.exercise("alone")
    make.graded(make.user(), alone, ratio=1.0)  # one entry has no order to settle
    for ratio in (1.0, 1.1):
        make.graded(make.user(), ex, ratio=ratio)
    Verification.objects.all().delete()
    long_ago = timezone.now() - timedelta(days=2)
    Verification.objects.create(
        exercise_version=ex.current_version, status=Verification.Status.DONE, finished_at=long_ago
    )
    with django_capture_on_commit_callbacks() as callbacks:
        assert verifications_sweep() == {"resent": 0, "reclaimed": 0, "requested": 1}
        assert verifications_sweep()["requested"] == 0  # it is pending now
    pending = Verification.objects.get(status=Verification.Status.PENDING)
    assert pending.exercise_version == ex.current_version
    assert sent_tasks(callbacks, monkeypatch) == [(VERIFY_TASK, (pending.id,), "cpu", 0)]

    # The message was lost (broker restart): the sweep sends it again, once it is overdue.
    Verification.objects.filter(id=pending.id).update(requested_at=long_ago)
    sent = []
    from celery import current_app

    monkeypatch.setattr(current_app, "send_task", lambda name, args, **kw: sent.append(args))
    assert verifications_sweep()["resent"] == 1
    assert sent == [(pending.id,)]
    # A worker died while measuring: the batch is put back and sent again.
    Verification.objects.filter(id=pending.id).update(status=Verification.Status.RUNNING, started_at=long_ago)
    assert verifications_sweep()["reclaimed"] == 1
    assert Verification.objects.get(id=pending.id).status == Verification.Status.PENDING


@pytest.mark.docker
def test_the_top_is_measured_again_in_one_session_and_ranked_by_the_new_intervals(
    exercise, top_two, settings, requires, client
):
    """On Docker: three students' entries whose stored intervals are planted lies. The top two
    are graded again in two interleaved rounds on one seed; their lies are replaced by measurements, the
    third is left alone, and the next batch measures the new top in the opposite order."""
    requires("Docker engine", docker_is_up(), "start dockerd")
    settings.SANDBOX_BACKEND = "docker"
    settings.SANDBOX_POOL_SIZE = 0
    solution = exercise.current_version.files["solution.py"]
    students = [make.user(f"fast{i}", pseudonym=f"runner{i}") for i in range(3)]
    planted = {0: (0.001, 0.0009, 0.0011), 1: (0.002, 0.0019, 0.0021), 2: (0.003, 0.0029, 0.0031)}
    for i, student in enumerate(students):
        code = f"# copy {i} of the reference\n{solution}"
        sub = make.graded(student, exercise, ratio=planted[i][0], interval=planted[i][1:], code=code)
        assert Entry.objects.get(user=student).code_digest == code_digest(sub.code)
    Verification.objects.all().delete()  # the requests of those new bests; we run our own
    first = verification_request(exercise.current_version_id, delay_s=0)
    assert first is not None

    verify_top(first.id)
    first.refresh_from_db()
    assert first.status == Verification.Status.DONE, first.candidates
    measured = {row["user"]: row for row in first.candidates}
    assert set(measured) == {students[0].id, students[1].id}  # the top two, not the third
    assert [row["positions"] for row in first.candidates] == [[0, 1], [1, 0]] and not first.reversed_order
    for i in (0, 1):
        row, entry = measured[students[i].id], Entry.objects.get(user=students[i])
        assert row["verdict"] == "ACCEPTED" and row["stored"], row
        assert row["before"] == pytest.approx(list(planted[i]))
        assert len(row["rounds"]) == 2 and row["after"] == pytest.approx(list(rounds_combined(row["rounds"])))
        # The reference's own code is not 500x faster than the reference: the lie is gone.
        assert entry.ratio_low > 0.01 and entry.ratio_high > 0.3, (entry.ratio_low, entry.ratio_high)
        assert (entry.verification_id, entry.verified_at) == (first.id, first.finished_at)
    third = Entry.objects.get(user=students[2])
    assert (third.ratio_low, third.verification) == (pytest.approx(0.0029), None)

    # The board marks the measured rows and says when; ranks follow the new intervals.
    board = exercise_board(exercise, viewer=students[0])
    assert board.verified is not None and board.verified.measured == 2
    assert {r.user_id for r in board.rows if r.verified} == {students[0].id, students[1].id}
    client.force_login(students[0])
    page = client.get(reverse("leaderboards:exercise", args=[exercise.slug])).content.decode()
    assert "were last measured again together" in page and page.count("✓</span>") == 2

    # The next batch: the new top two (the third's planted 0.003 now leads), bottom-up.
    second = verification_request(exercise.current_version_id, delay_s=0)
    verify_top(second.id)
    second.refresh_from_db()
    assert second.status == Verification.Status.DONE and second.reversed_order
    order = [row["user"] for row in second.candidates]
    assert len(order) == 2 and order[-1] == students[2].id  # it led the board: measured last
    assert Entry.objects.get(user=students[2]).ratio_low > 0.01
