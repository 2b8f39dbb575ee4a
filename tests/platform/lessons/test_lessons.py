"""The lessons app: sync from exercises/lessons/, the learning path, lesson pages in both
languages, progress (read, and the lesson's quiz passed), and rate-limited sandbox runs."""
import json
import shutil
from datetime import timedelta
from pathlib import Path

import pytest
from django.urls import reverse
from django.utils import timezone

from lessons.models import Lesson, LessonProgress, PlaygroundRun
from lessons.services import lessons_sync
from quizzes.models import QuizAttempt
from quizzes.services import quiz_answer_save, quiz_content_sync, quiz_finish
from tests.sandbox.backends import backend_sandbox

LESSON = "computation-graphs"
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def synced(db, content_dir, settings):
    settings.CONTENT_DIR = content_dir
    assert not quiz_content_sync(content_dir).errors
    report = lessons_sync(content_dir)
    assert not report.errors, report.errors
    return report


@pytest.fixture
def student_client(client, make_user):
    user = make_user("ada")
    client.force_login(user)
    client.user = user
    return client


def test_sync_creates_every_lesson_is_idempotent_and_versions_changes(synced, content_dir):
    assert len(synced.created) == Lesson.objects.count() == 14
    again = lessons_sync(content_dir)
    assert not again.created and not again.updated and len(again.unchanged) == 14
    path = content_dir / "lessons" / LESSON / "en.md"
    path.write_text(path.read_text() + "\nOne more sentence.\n")
    changed = lessons_sync(content_dir)
    assert changed.updated == [LESSON]
    lesson = Lesson.objects.get(slug=LESSON)
    assert lesson.current_version.number == 2 and lesson.current_version.body_en.endswith("One more sentence.\n")


def test_a_broken_lesson_keeps_its_last_version_and_a_removed_one_is_retired(synced, content_dir):
    before = Lesson.objects.get(slug=LESSON).current_version
    (content_dir / "lessons" / LESSON / "zh-hans.md").unlink()
    shutil.rmtree(content_dir / "lessons" / "interview-prep")
    report = lessons_sync(content_dir)
    assert LESSON in report.errors and report.retired == ["interview-prep"]
    assert Lesson.objects.get(slug=LESSON).current_version == before
    assert Lesson.objects.get(slug="interview-prep").retired


def test_index_shows_the_learning_path_in_order(synced, student_client):
    page = student_client.get(reverse("lessons:index")).content.decode()
    slugs = ("computation-graphs", "define-then-run", "interview-prep")
    titles = [Lesson.objects.get(slug=slug).current_version.title_en for slug in slugs]
    positions = [page.index(t) for t in titles]
    assert positions == sorted(positions) and "0 of 14 lessons read." in page


def test_a_lesson_page_in_english_and_chinese(synced, student_client):
    url = reverse("lessons:detail", args=["the-article-demos"])
    english = student_client.get(url).content.decode()
    assert "The article&#x27;s two demos, run and corrected" in english and english.count('class="run-code"') == 4
    data = json.loads(english.split('<script id="viz-data" type="application/json">')[1].split("</script>")[0])
    assert {t["program"] for t in data["static-vs-dynamic"]["traces"]} == {"seed", "branch"}
    student_client.cookies["django_language"] = "zh-hans"
    chinese = student_client.get(url).content.decode()
    assert "文章里的两个演示：运行并改正" in chinese and "静态与动态执行，逐步对比" in chinese
    assert ">运行</button>" in chinese
    pitfalls = student_client.get(reverse("lessons:detail", args=["pitfalls-autograd"])).content.decode()
    assert 'data-question="ag-backward-twice"' in pitfalls and "第二次调用" in pitfalls


def test_radar_page_shows_measured_numbers_with_machine_and_date(synced, student_client):
    page = student_client.get(reverse("lessons:detail", args=["choosing"])).content.decode()
    bench = json.loads((ROOT / "bench" / "results" / "engines.json").read_text())
    assert f"{bench['static_vs_eager_mlp']['ratio']:.2f}× faster" in page
    assert f"Measured {bench['environment']['when']}" in page and "TensorFlow 1.x" in page


def test_reading_and_passing_the_lesson_quiz_show_on_the_path(synced, student_client):
    lesson = Lesson.objects.get(slug=LESSON)
    student_client.post(reverse("lessons:read", args=[LESSON]))
    assert LessonProgress.objects.filter(user=student_client.user, lesson=lesson).exists()
    response = student_client.post(reverse("lessons:quiz", args=[LESSON]))
    attempt = QuizAttempt.objects.get(user=student_client.user)
    assert response.url == reverse("quizzes:attempt", args=[attempt.pk])
    items = list(attempt.items.order_by("position"))
    assert [i.question.uid for i in items] == lesson.current_version.meta["quiz"]
    for item in items:
        key = item.snapshot["key"]["answer"]
        answer = ("true" if key else "false") if item.snapshot["type"] == "true_false" else str(key)
        quiz_answer_save(user=student_client.user, attempt_id=attempt.pk, position=item.position,
                         fields={"answer": [answer]})
    quiz_finish(user=student_client.user, attempt_id=attempt.pk)
    page = student_client.get(reverse("lessons:index")).content.decode()
    assert "1 of 14 lessons read." in page and page.count("Quiz passed") == 1


def test_a_failed_lesson_quiz_does_not_count(synced, student_client):
    student_client.post(reverse("lessons:quiz", args=[LESSON]))
    attempt = QuizAttempt.objects.get(user=student_client.user)
    quiz_finish(user=student_client.user, attempt_id=attempt.pk)   # nothing answered
    assert "Quiz passed" not in student_client.get(reverse("lessons:detail", args=[LESSON])).content.decode()


def test_the_playground_runs_in_the_grading_sandbox(synced, student_client, settings, requires):
    backend_sandbox("local", requires)
    settings.SANDBOX_BACKEND = "local"
    response = student_client.post(reverse("lessons:playground_run"), {"code": "print(6 * 7)"})
    body = response.json()
    assert response.status_code == 200 and body["ok"] and body["stdout"] == "42\n" and body["backend"] == "local"
    assert PlaygroundRun.objects.get().status == "ok"


def test_the_rate_limit_refuses_with_a_clear_message_and_stores_nothing(synced, student_client, monkeypatch):
    monkeypatch.setattr("lessons.services.RUNS_PER_WINDOW", 3)
    now = timezone.now()
    for seconds in (500, 30, 10):
        PlaygroundRun.objects.create(user=student_client.user, created_at=now - timedelta(seconds=seconds))
    for url, field in ((reverse("lessons:playground_run"), "code"), (reverse("lessons:compile_flow"), "source")):
        response = student_client.post(url, {field: "print(1)"})
        assert response.status_code == 429 and 90 <= int(response["Retry-After"]) <= 101
        assert "You have used your runs for now. Try again in" in response.json()["error"]
    assert PlaygroundRun.objects.count() == 3


def test_empty_and_oversized_programs_are_refused_without_a_run(synced, student_client):
    empty = student_client.post(reverse("lessons:playground_run"), {"code": "  "})
    huge = student_client.post(reverse("lessons:compile_flow"), {"source": "#" * 9000})
    assert empty.status_code == huge.status_code == 400 and "at most 8 KB" in huge.json()["error"]
    assert not PlaygroundRun.objects.exists()


def test_pages_need_a_login(synced, client):
    for url in (reverse("lessons:index"), reverse("lessons:detail", args=[LESSON]), reverse("lessons:playground")):
        assert client.get(url).status_code == 302
    assert client.post(reverse("lessons:playground_run"), {"code": "print(1)"}).status_code == 302
