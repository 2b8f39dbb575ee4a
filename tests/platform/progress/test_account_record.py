"""The account page shows the student's own record: recent submissions with their verdicts
(linked to the verdict and the exercise), lessons read, exercises accepted out of all published,
and finished quizzes with their scores; nobody else's."""
import pytest
from django.urls import reverse
from django.utils import timezone

from catalog.services import content_sync
from lessons.models import Lesson, LessonProgress
from lessons.services import lessons_sync
from quizzes.models import Bank, QuizAttempt
from quizzes.services import quiz_content_sync


@pytest.fixture
def everything(exercise, content_dir, settings):
    settings.CONTENT_DIR = content_dir
    assert not content_sync(content_dir).errors  # every exercise, not only the thin path's
    assert not quiz_content_sync(content_dir).errors
    assert not lessons_sync(content_dir).errors
    return exercise


def finished_quiz(user, score: float, max_score: float) -> QuizAttempt:
    bank = Bank.objects.filter(retired=False).order_by("uid").first()
    return QuizAttempt.objects.create(user=user, kind=QuizAttempt.Kind.BANK, bank=bank, seed=1, score=score,
                                      max_score=max_score, status=QuizAttempt.Status.FINISHED,
                                      finished_at=timezone.now())


def test_the_account_page_shows_history_and_progress(client, everything, graded, make_user):
    ada, bob = make_user("ada"), make_user("bob")
    wrong = graded("wrong_answer_format_3", user=ada)
    accepted = graded("accepted", user=ada)
    graded("accepted", user=bob)
    LessonProgress.objects.create(user=ada, lesson=Lesson.objects.get(slug="computation-graphs"))
    quiz = finished_quiz(ada, 3, 4)
    client.force_login(ada)

    page = client.get(reverse("accounts:profile"))

    assert page.status_code == 200
    html = page.content.decode()
    lessons = Lesson.objects.filter(retired=False).count()
    progress = page.context["progress"]
    assert (progress.lessons_read, progress.lessons_total) == (1, lessons)
    assert progress.exercises_accepted == 1 and progress.exercises_total > 1
    assert f"1 of {lessons}" in html and f"1 of {progress.exercises_total}" in html
    assert [s.pk for s in page.context["submissions"]] == [accepted.pk, wrong.pk]  # newest first, ada's only
    assert reverse("submissions:detail", args=[accepted.pk]) in html
    assert reverse("submissions:detail", args=[wrong.pk]) in html
    assert "Accepted" in html and "Partly right" in html
    assert reverse("quizzes:attempt", args=[quiz.pk]) in html and "3 / 4 (75%)" in html
    assert "Leaderboard name" in html  # the settings stay on the page


def test_a_new_student_sees_empty_sections_that_say_what_to_do(client, everything, make_user):
    client.force_login(make_user("ada"))
    html = client.get(reverse("accounts:profile")).content.decode()
    assert "No submissions yet." in html and "No quiz finished yet." in html
    assert "0 of" in html


def test_the_record_speaks_chinese(client, everything, graded, make_user):
    ada = make_user("ada")
    graded("accepted", user=ada)
    client.force_login(ada)
    html = client.get(reverse("accounts:profile"), HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    for english in ("My progress", "My recent submissions", "My quiz results", "Lessons read", "Exercises accepted"):
        assert english not in html, english
    assert "我的进度" in html


def test_saving_the_settings_still_works_and_keeps_the_record(client, everything, make_user):
    ada = make_user("ada")
    client.force_login(ada)
    bad = client.post(reverse("accounts:profile"), {"pseudonym": ""})
    assert bad.status_code == 400 and "progress" in bad.context
    ok = client.post(reverse("accounts:profile"), {"pseudonym": "Quiet Fox 12"})
    assert ok.status_code == 302
    ada.refresh_from_db()
    assert ada.pseudonym == "Quiet Fox 12"
