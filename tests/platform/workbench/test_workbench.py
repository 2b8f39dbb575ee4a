"""Drafts, practice runs (visible checks only, never scored) and the exercise list."""

import json

import pytest
from django.conf import settings
from django.urls import reverse

from catalog.services import content_sync
from workbench.models import Draft, PracticeRun

pytestmark = pytest.mark.django_db


def test_a_draft_is_kept_and_shown_instead_of_the_last_submission(client, exercise, make_user, graded):
    user = make_user()
    graded("starter", user=user, code="old = 1\n")
    client.force_login(user)
    response = client.post(reverse("workbench:draft_save", args=[exercise.slug]), {"code": "draft = 2\n"})
    assert response.status_code == 200 and response.json()["saved"] is True
    page = client.get(reverse("submissions:exercise_detail", args=[exercise.slug])).content.decode()
    assert "draft = 2" in page and "old = 1" not in page
    assert json.dumps(exercise.current_version.starter)[:40] in page  # the starter, for "reset"


def test_an_oversized_draft_is_refused_and_the_old_one_kept(client, exercise, make_user, settings):
    settings.SUBMISSION_MAX_BYTES = 10
    user = make_user()
    client.force_login(user)
    client.post(reverse("workbench:draft_save", args=[exercise.slug]), {"code": "x = 1"})
    response = client.post(reverse("workbench:draft_save", args=[exercise.slug]), {"code": "x" * 11})
    assert response.status_code == 400 and "the limit is 10 bytes" in response.json()["error"]
    assert Draft.objects.get(user=user).code == "x = 1"


def test_practice_runs_are_rate_limited_per_student(
    client, exercise, make_user, settings, django_capture_on_commit_callbacks
):
    settings.PRACTICE_RUNS_PER_MINUTE = 2
    client.force_login(make_user())
    url = reverse("workbench:practice_start", args=[exercise.slug])
    with django_capture_on_commit_callbacks(execute=False):
        assert client.post(url, {"code": "x = 1"}).status_code == 302
        assert client.post(url, {"code": "x = 1"}).status_code == 302
        refused = client.post(url, {"code": "x = 1"})
    assert refused.status_code == 429 and "2 times a minute" in refused.content.decode()
    assert PracticeRun.objects.count() == 2
    other = make_user("grace")
    client.force_login(other)
    with django_capture_on_commit_callbacks(execute=False):
        assert client.post(url, {"code": "x = 1"}).status_code == 302  # the limit is each student's own


def practice_box(client, run, language="en"):
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = language
    return client.get(reverse("workbench:practice_status", args=[run.pk]), HTTP_HX_REQUEST="true").content.decode()


@pytest.mark.parametrize(("language", "said"), [
    ("en", "We could not run your checks right now. Try again in a moment."),
    ("zh-hans", "我们现在无法运行你的检查，请稍后再试。"),
])
def test_a_practice_run_whose_sandbox_stays_unavailable_ends_and_stops_polling(
    client, exercise, make_user, settings, language, said
):
    from workbench.tasks import run_visible_checks

    settings.SANDBOX_BACKEND = "docker"
    settings.SANDBOX_IMAGE = "graphdojo-sandbox:no-such-tag"  # engine down or image missing: both unavailable
    user = make_user()
    client.force_login(user)
    run = PracticeRun.objects.create(user=user, exercise_version=exercise.current_version, code="x = 1\n")
    assert 'hx-trigger="every 1s"' in practice_box(client, run)  # waiting: the box polls

    # Every retry (run eagerly, one after another) meets the same unavailable sandbox.
    run_visible_checks.apply(args=[run.id])

    run.refresh_from_db()
    assert (run.status, run.result) == (PracticeRun.Status.FAILED, None) and run.finished_at is not None
    box = practice_box(client, run, language)
    assert said in box and 'data-status="failed"' in box
    assert "hx-trigger" not in box and "spinner" not in box  # the page stops asking


def test_a_practice_run_put_back_for_a_retry_keeps_waiting(exercise, make_user, settings):
    from grader.host import SandboxUnavailable
    from grading.jobs import JobRetry
    from workbench.practice import practice_run_grade

    settings.SANDBOX_BACKEND = "docker"
    settings.SANDBOX_IMAGE = "graphdojo-sandbox:no-such-tag"
    run = PracticeRun.objects.create(user=make_user(), exercise_version=exercise.current_version, code="x = 1\n")
    with pytest.raises(JobRetry) as retry:
        practice_run_grade(practice_id=run.id, final_attempt=False)
    assert isinstance(retry.value.__cause__, SandboxUnavailable)
    run.refresh_from_db()
    assert run.status == PracticeRun.Status.QUEUED


def test_a_practice_run_with_no_result_by_its_deadline_is_given_up(client, exercise, make_user, settings):
    from datetime import timedelta

    from django.utils import timezone

    settings.PRACTICE_RUN_DEADLINE_S = 60
    user = make_user()
    client.force_login(user)
    fresh = PracticeRun.objects.create(user=user, exercise_version=exercise.current_version, code="x = 1\n")
    lost = PracticeRun.objects.create(user=user, exercise_version=exercise.current_version, code="x = 1\n")
    PracticeRun.objects.filter(id=lost.id).update(created_at=timezone.now() - timedelta(seconds=61))
    assert 'hx-trigger="every 1s"' in practice_box(client, fresh)
    box = practice_box(client, lost, "zh-hans")
    assert "我们现在无法运行你的检查，请稍后再试。" in box and "hx-trigger" not in box
    lost.refresh_from_db()
    assert lost.status == PracticeRun.Status.FAILED


def test_a_practice_run_is_anothers_to_see_only_if_it_is_theirs(client, exercise, make_user):
    run = PracticeRun.objects.create(user=make_user(), exercise_version=exercise.current_version, code="x")
    client.force_login(make_user("grace"))
    assert client.get(reverse("workbench:practice_status", args=[run.pk])).status_code == 404


def test_the_list_marks_solved_and_attempted_and_puts_easy_first(client, exercise, make_user, graded):
    user = make_user()
    graded("accepted", user=user)
    client.force_login(user)
    page = client.get(reverse("submissions:exercise_list")).content.decode()
    assert f'data-state="solved" data-slug="{exercise.slug}"' in page
    from catalog.models import Exercise

    slugs = [e.slug for e in Exercise.objects.all()]
    order = sorted(slugs, key=lambda s: page.index(f'data-slug="{s}"'))
    difficulties = [Exercise.objects.get(slug=s).current_version.difficulty for s in order]
    assert difficulties == sorted(difficulties, key=["easy", "medium", "hard"].index)


def test_the_list_filters_by_difficulty_and_topic(client, exercise, content_dir, make_user):
    assert not content_sync(content_dir).errors  # every exercise, for the filters to leave some out
    client.force_login(make_user())
    hard = client.get(reverse("submissions:exercise_list"), {"difficulty": "hard"}).content.decode()
    assert exercise.slug not in hard and 'data-state="new"' in hard
    tagged = client.get(reverse("submissions:exercise_list"), {"tag": "topological-sort"}).content.decode()
    assert tagged.count('data-state="') == 1 and exercise.slug in tagged


def test_the_exercise_page_shows_its_title_once_and_difficulty_in_chinese(client, exercise, make_user):
    client.force_login(make_user())
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    page = client.get(reverse("submissions:exercise_detail", args=[exercise.slug])).content.decode()
    assert page.count(exercise.current_version.title_zh) == 2  # <title> and <h1>, not the statement too
    assert ">简单</span>" in page


def test_the_last_verdicts_error_lines_are_marked_while_its_code_is_in_the_editor(client, exercise, make_user, graded):
    user = make_user()
    graded("syntax_error", user=user, code="class StaticGraph:\n    def __init__(self)\n        pass\n")
    client.force_login(user)
    page = client.get(reverse("submissions:exercise_detail", args=[exercise.slug])).content.decode()
    assert '<script id="error-lines" type="application/json">[{"line": 2' in page
    client.post(reverse("workbench:draft_save", args=[exercise.slug]), {"code": "fixed = True\n"})
    page = client.get(reverse("submissions:exercise_detail", args=[exercise.slug])).content.decode()
    assert 'id="error-lines"' not in page  # the code changed: the old marks would point at the wrong lines


def test_the_suggested_order_puts_an_exercise_after_what_it_requires(
    client, content_dir, make_user, settings, tmp_path
):
    from catalog.services import content_sync

    # static-graph-executor (easy) now requires jit-cache-guards (medium): it must come after it.
    toml = content_dir / "coding" / "static-graph-executor" / "exercise.toml"
    toml.write_text(toml.read_text().replace("tags = [", 'requires = ["jit-cache-guards"]\ntags = [', 1))
    settings.EXERCISE_CACHE_DIR = tmp_path / "cache"
    assert not content_sync(content_dir).errors
    client.force_login(make_user())
    page = client.get(reverse("submissions:exercise_list")).content.decode()
    assert page.index('data-slug="jit-cache-guards"') < page.index('data-slug="static-graph-executor"')
    assert page.index('data-slug="static-graph-executor"') < page.index('data-slug="broadcast-autograd"')
