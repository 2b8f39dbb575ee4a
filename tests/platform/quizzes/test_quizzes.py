"""Quizzes as a student meets them: sync, start, save as you go, deadlines, results, review."""
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from quizzes.models import AttemptItem, Bank, Question, QuizAttempt, ReviewState
from quizzes.services import quiz_content_sync, quiz_start_bank, quiz_start_custom

pytestmark = pytest.mark.django_db
BANK = "autograd-pitfalls"


@pytest.fixture
def synced(content_dir):
    report = quiz_content_sync(content_dir)
    assert not report.errors, report.errors
    return report


@pytest.fixture
def student(make_user):
    return make_user("ada")


@pytest.fixture
def student_client(client, student):
    client.force_login(student)
    return client


def right_fields(item: AttemptItem) -> dict:
    """The form a student who knows the answer would send."""
    snapshot = item.snapshot
    answer = snapshot["key"]["answer"]
    kind = snapshot["type"]
    if kind == "ordering":
        return {f"rank-{choice_id}": str(rank) for rank, choice_id in enumerate(answer, start=1)}
    if kind == "multiple":
        return {"answer": answer}
    if kind == "true_false":
        return {"answer": "true" if answer else "false"}
    if kind == "numeric":
        return {"answer": f"{answer:g}"}
    return {"answer": str(answer)}


def save_url(attempt, position):
    return reverse("quizzes:save", args=[attempt.pk, position])


def test_sync_is_idempotent_and_retires_what_left_the_bank(content_dir, synced):
    assert Question.objects.count() == len(synced.created) >= 80
    again = quiz_content_sync(content_dir)
    assert not again.created and not again.updated and len(again.unchanged) == len(synced.created)
    bank = content_dir / "quizzes" / "autograd.toml"
    text = bank.read_text(encoding="utf-8")
    start = text.index('[[question]]\nid = "ag-item-short"')
    end = text.index("[[question]]", start + 5)
    bank.write_text(text[:start] + text[end:], encoding="utf-8")
    third = quiz_content_sync(content_dir)
    assert third.retired == ["ag-item-short"]
    assert Question.objects.get(uid="ag-item-short").retired


def test_a_broken_bank_is_reported_and_changes_nothing(content_dir, synced):
    bank = content_dir / "quizzes" / "autograd.toml"
    bank.write_text(bank.read_text(encoding="utf-8").replace('answer = "False None"', "answer = 7"), encoding="utf-8")
    report = quiz_content_sync(content_dir)
    assert list(report.errors) == ["quizzes/autograd.toml"]
    assert 'question "ag-no-grad-output"' in report.errors["quizzes/autograd.toml"][0]
    assert not report.retired and not Question.objects.filter(retired=True).exists()


def test_a_whole_quiz_right_scores_full_marks_and_shows_feedback(student_client, student, synced):
    bank = Bank.objects.get(uid=BANK)
    response = student_client.post(reverse("quizzes:start_bank", args=[BANK]), {"timed": "on"})
    attempt = QuizAttempt.objects.get()
    assert response.url == reverse("quizzes:attempt", args=[attempt.pk])
    assert attempt.deadline is not None and attempt.items.count() == len(bank.question_uids)
    for item in attempt.items.all():
        saved = student_client.post(save_url(attempt, item.position), right_fields(item))
        assert saved.status_code == 200 and "Saved" in saved.content.decode()
    student_client.post(reverse("quizzes:finish", args=[attempt.pk]))
    attempt.refresh_from_db()
    assert attempt.status == "finished" and attempt.score == attempt.max_score
    page = student_client.get(reverse("quizzes:attempt", args=[attempt.pk])).content.decode()
    assert f'id="score-value">{attempt.max_score:.0f}<' in page
    assert "Your mistakes" not in page


def test_an_open_quiz_page_reveals_no_answer(student_client, synced):
    student_client.post(reverse("quizzes:start_bank", args=[BANK]))
    attempt = QuizAttempt.objects.get()
    page = student_client.get(reverse("quizzes:attempt", args=[attempt.pk])).content.decode()
    for item in attempt.items.all():
        assert item.snapshot["explanation"]["en"][:40] not in page
    assert "[0.0, 0.0]" not in page  # the stored output of a "what does this print?" question
    assert "right-choice" not in page and "data-correct" not in page


def test_mistakes_are_reviewed_and_come_back_in_a_review_quiz(student_client, student, synced):
    attempt = quiz_start_custom(user=student, topic="autograd", count=3)
    first, *_rest = attempt.items.all()
    student_client.post(save_url(attempt, first.position), right_fields(first))
    student_client.post(reverse("quizzes:finish", args=[attempt.pk]))
    page = student_client.get(reverse("quizzes:attempt", args=[attempt.pk])).content.decode()
    assert page.count('data-correct="false"') == 2 * 2  # in "mistakes" and again in "every question"
    missed = set(attempt.items.exclude(position=first.position).values_list("question__uid", flat=True))
    assert set(ReviewState.objects.filter(user=student, box=1).values_list("question__uid", flat=True)) == missed
    home = student_client.get(reverse("quizzes:home")).content.decode()
    assert "2 missed questions are due for review" in home
    student_client.post(reverse("quizzes:start_review"))
    review = QuizAttempt.objects.get(kind="review")
    assert set(review.items.values_list("question__uid", flat=True)) == missed
    for item in review.items.all():
        student_client.post(save_url(review, item.position), right_fields(item))
    student_client.post(reverse("quizzes:finish", args=[review.pk]))
    states = ReviewState.objects.filter(user=student)
    assert all(s.box == 2 and s.due_at > timezone.now() + timedelta(hours=23) for s in states)
    assert "due for review" not in student_client.get(reverse("quizzes:home")).content.decode()


def test_an_answer_after_the_deadline_is_refused_and_the_attempt_closed(student_client, student, synced):
    attempt = quiz_start_bank(user=student, bank=Bank.objects.get(uid=BANK), timed=True)
    item = attempt.items.get(position=1)
    assert student_client.post(save_url(attempt, 1), right_fields(item)).status_code == 200
    QuizAttempt.objects.filter(pk=attempt.pk).update(deadline=timezone.now() - timedelta(seconds=1))
    second = attempt.items.get(position=2)
    late = student_client.post(save_url(attempt, 2), right_fields(second), HTTP_HX_REQUEST="true")
    assert late.status_code == 409
    assert late["HX-Redirect"] == reverse("quizzes:attempt", args=[attempt.pk])
    assert "Time is up" in late.content.decode()
    attempt.refresh_from_db()
    second.refresh_from_db()
    assert attempt.status == "expired" and second.response is None
    assert attempt.score == 1  # the answer given in time still counts
    page = student_client.get(reverse("quizzes:attempt", args=[attempt.pk])).content.decode()
    assert "Time ran out" in page


def test_the_deadline_survives_a_reload(student_client, synced):
    student_client.post(reverse("quizzes:start_bank", args=[BANK]), {"timed": "on"})
    attempt = QuizAttempt.objects.get()
    first = student_client.get(reverse("quizzes:attempt", args=[attempt.pk])).content.decode()
    second = student_client.get(reverse("quizzes:attempt", args=[attempt.pk])).content.decode()
    marker = f'data-deadline-ms="{int(attempt.deadline.timestamp() * 1000)}"'
    assert marker in first and marker in second


def test_another_students_attempt_cannot_be_read_answered_or_finished(client, make_user, student, synced):
    attempt = quiz_start_bank(user=student, bank=Bank.objects.get(uid=BANK), timed=False)
    client.force_login(make_user("mallory"))
    item = attempt.items.get(position=1)
    assert client.get(reverse("quizzes:attempt", args=[attempt.pk])).status_code == 404
    assert client.post(save_url(attempt, 1), right_fields(item)).status_code == 404
    assert client.post(reverse("quizzes:finish", args=[attempt.pk])).status_code == 404
    attempt.refresh_from_db()
    item.refresh_from_db()
    assert attempt.status == "open" and item.response is None


@pytest.mark.parametrize("fields", [{"answer": "not-a-choice"}, {"answer": ["a", "b"]}], ids=["unknown", "twice"])
def test_a_tampered_answer_is_refused_and_not_stored(student_client, student, synced, fields):
    attempt = quiz_start_bank(user=student, bank=Bank.objects.get(uid=BANK), timed=False)
    item = next(i for i in attempt.items.all() if i.snapshot["type"] == "single")
    response = student_client.post(save_url(attempt, item.position), fields)
    assert response.status_code == 400
    item.refresh_from_db()
    assert item.response is None
    assert student_client.post(save_url(attempt, 999), {"answer": "a"}).status_code == 404


def test_a_finished_attempt_takes_no_more_answers(student_client, student, synced):
    attempt = quiz_start_bank(user=student, bank=Bank.objects.get(uid=BANK), timed=False)
    student_client.post(reverse("quizzes:finish", args=[attempt.pk]))
    item = attempt.items.get(position=1)
    assert student_client.post(save_url(attempt, 1), right_fields(item)).status_code == 409
    item.refresh_from_db()
    assert item.response is None


def test_pages_follow_the_language(student_client, student, synced):
    attempt = quiz_start_bank(user=student, bank=Bank.objects.get(uid=BANK), timed=False)
    url = reverse("quizzes:attempt", args=[attempt.pk])
    english = student_client.get(url, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    chinese = student_client.get(url, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    item = attempt.items.get(position=1)
    assert item.snapshot["text"]["en"] in english.replace("&#x27;", "'").replace("&quot;", '"')
    assert item.snapshot["text"]["zh-hans"][:8] in chinese
