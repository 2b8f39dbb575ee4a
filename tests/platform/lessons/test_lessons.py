"""The lessons app: sync from exercises/lessons/, the learning path, lesson pages in both
languages, progress (read, and the lesson's quiz passed), and rate-limited sandbox runs: queued by
the web request, run by the task in the grading sandbox, polled by the page, read by their owner only."""
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
        if item.snapshot["type"] == "true_false":
            answers = ["true" if key else "false"]
        else:  # one choice, or several for a multiple-answer question
            answers = [str(k) for k in key] if isinstance(key, list) else [str(key)]
        quiz_answer_save(user=student_client.user, attempt_id=attempt.pk, position=item.position,
                         fields={"answer": answers})
    quiz_finish(user=student_client.user, attempt_id=attempt.pk)
    page = student_client.get(reverse("lessons:index")).content.decode()
    assert "1 of 14 lessons read." in page and page.count("Quiz passed") == 1


def test_a_failed_lesson_quiz_does_not_count(synced, student_client):
    student_client.post(reverse("lessons:quiz", args=[LESSON]))
    attempt = QuizAttempt.objects.get(user=student_client.user)
    quiz_finish(user=student_client.user, attempt_id=attempt.pk)   # nothing answered
    assert "Quiz passed" not in student_client.get(reverse("lessons:detail", args=[LESSON])).content.decode()


def start(client, code="print(6 * 7)", url="lessons:playground_run", field="code"):
    """POST a run as the page does; the web request only queues it."""
    response = client.post(reverse(url), {field: code})
    assert response.status_code == 202, response.content
    return response.json()


def status(client, document, language="en"):
    return client.get(document["status_url"], HTTP_ACCEPT_LANGUAGE=language).json()


def test_a_playground_run_is_queued_then_a_worker_runs_it_as_a_lent_uid(synced, student_client, settings, requires):
    from lessons.tasks import run_playground

    backend_sandbox("local", requires)
    settings.SANDBOX_BACKEND = "local"
    queued = start(student_client, "import os\nprint(6 * 7, os.getuid(), os.geteuid())")
    assert (queued["state"], queued["finished"]) == ("queued", False) and "result" not in queued
    run = PlaygroundRun.objects.get()
    assert (run.state, run.started_at, run.result) == (PlaygroundRun.State.QUEUED, None, None)
    assert status(student_client, queued)["state"] == "queued"   # nothing runs in the web request

    run_playground.apply(args=[run.id])   # what the worker does with the message

    done = status(student_client, queued)
    assert (done["state"], done["finished"]) == ("done", True)
    answer, uid, euid = done["result"]["stdout"].split()
    assert answer == "42" and int(uid) != 0 and int(euid) != 0   # untrusted code never runs as root
    assert done["result"]["ok"] and done["result"]["backend"] == "local"
    run.refresh_from_db()
    assert (run.status, run.started_at is not None, run.finished_at is not None) == ("ok", True, True)

    run_playground.apply(args=[run.id])   # a redelivered message finds it finished and does nothing
    run.refresh_from_db()
    assert run.state == PlaygroundRun.State.DONE and run.result["stdout"] == done["result"]["stdout"]


def test_a_compile_flow_rerun_goes_through_the_same_task(synced, student_client, settings, requires):
    from grader.lessons.traces import DEFAULT_FLOW_PROGRAM
    from lessons.tasks import run_playground

    backend_sandbox("local", requires)
    settings.SANDBOX_BACKEND = "local"
    queued = start(student_client, DEFAULT_FLOW_PROGRAM, url="lessons:compile_flow", field="source")
    assert queued["kind"] == "flow" and queued["state"] == "queued"
    run_playground.apply(args=[queued["id"]])
    done = status(student_client, queued)
    assert done["state"] == "done" and done["result"]["ok"] and done["result"]["flow"]["stages"]


@pytest.mark.parametrize(("language", "said"), [
    ("en", "The sandbox is not available right now; try again soon."),
    ("zh-hans", "沙箱暂时不可用，请稍后再试。"),
])
def test_the_web_process_queues_runs_with_no_sandbox_and_an_unavailable_one_ends_clearly(
    synced, student_client, settings, language, said
):
    from lessons.tasks import run_playground

    # The web process has no sandbox at all (the compose stack's web container has no Docker
    # socket): starting a run must not need one.
    settings.SANDBOX_BACKEND = "docker"
    settings.SANDBOX_IMAGE = "graphdojo-sandbox:no-such-tag"
    program = start(student_client)
    flow = start(student_client, "x = g.placeholder((2, 2), name='x')\noutputs = [x]\n",
                 url="lessons:compile_flow", field="source")
    assert program["state"] == flow["state"] == "queued"

    run_playground.apply(args=[program["id"]])   # every retry meets the same unavailable sandbox

    failed = status(student_client, program, language)
    assert (failed["state"], failed["finished"], failed["error"]) == ("failed", True, said)
    run = PlaygroundRun.objects.get(id=program["id"])
    assert (run.failure, run.result) == (PlaygroundRun.Failure.UNAVAILABLE, None)


def test_a_run_put_back_for_a_retry_keeps_waiting(synced, student_client, settings):
    from grader.host import SandboxUnavailable
    from grading.jobs import JobRetry
    from lessons.runs import playground_run_execute

    settings.SANDBOX_BACKEND = "docker"
    settings.SANDBOX_IMAGE = "graphdojo-sandbox:no-such-tag"
    queued = start(student_client)
    with pytest.raises(JobRetry) as retry:
        playground_run_execute(run_id=queued["id"], final_attempt=False)
    assert isinstance(retry.value.__cause__, SandboxUnavailable)
    assert status(student_client, queued)["state"] == "queued"


def test_a_run_with_no_result_by_its_deadline_is_given_up(synced, student_client, settings):
    settings.LESSONS_PLAYGROUND_DEADLINE_S = 60
    fresh, lost = start(student_client), start(student_client)
    PlaygroundRun.objects.filter(id=lost["id"]).update(created_at=timezone.now() - timedelta(seconds=61))
    assert status(student_client, fresh)["state"] == "queued"
    given_up = status(student_client, lost, "zh-hans")
    assert given_up["state"] == "failed" and given_up["error"] == "结果没有按时返回，请稍后再试。"
    assert PlaygroundRun.objects.get(id=lost["id"]).failure == PlaygroundRun.Failure.LATE


def test_only_the_owner_can_read_a_run(synced, student_client, client, make_user):
    queued = start(student_client)
    other = client.__class__()
    other.force_login(make_user("grace"))
    assert other.get(queued["status_url"]).status_code == 404
    assert client.__class__().get(queued["status_url"]).status_code == 302   # anonymous: the login page
    assert other.get(reverse("lessons:run_status", args=[queued["id"] + 1000])).status_code == 404


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
