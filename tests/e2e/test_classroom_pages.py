"""Every classroom page at desktop width and at 390 px, in English and in Chinese: it renders,
says something in the page's language, and nothing but a table's own scroller is wider than
the phone. Set GRAPHDOJO_SCREENSHOTS=<dir> to keep a screenshot of each."""

import os
from pathlib import Path

import pytest
from django.utils import timezone
from playwright.sync_api import Browser

from courses.models import AssignmentItem, RegradeJob
from leaderboards.models import Entry, Verification
from tests.platform import classroom as make

pytestmark = [pytest.mark.browser, pytest.mark.slow]
WIDTHS = {"desktop": 1280, "phone": 390}
LANGUAGES = {"en": ("en-US", "Leaderboard"), "zh": ("zh-CN", "排行榜")}  # on every course and board page


@pytest.fixture
def classroom(transactional_db):
    ex = make.exercise("graph-ex")
    students = [
        make.user(f"student{i}", first_name=f"Student{i}", last_name="Example", email=f"s{i}@example.org")
        for i in range(12)
    ]
    instructor = make.user("prof", role="instructor", first_name="Pat", last_name="Prof")
    course = make.course(instructor, students=students)
    assignment, item = make.assignment(course, ex)
    failing = [
        {"name": "gradients_match", "passed": False, "message": "off by 1e-3"},
        {"name": "shapes", "passed": True},
    ]
    for i, s in enumerate(students):
        make.graded(s, ex, score=0.0, verdict="WRONG_ANSWER", checks=failing)
        make.graded(s, ex, ratio=0.8 + i / 20, checks=[{"name": "gradients_match", "passed": True}], code=f"# {i}\n")
    for i, s in enumerate(students[3:5], start=3):  # the same code graded twice more: the board shows a median
        for ratio in (0.85 + i / 20, 0.75 + i / 20):
            make.graded(s, ex, ratio=ratio, code=f"# {i}\n")
    job = RegradeJob.objects.create(
        course=course, scope="every submission to graph-ex", created_by=instructor, submission_ids=[]
    )
    # The top three were measured again together: the boards mark them and say when.
    Verification.objects.all().delete()
    top = list(Entry.objects.order_by("ratio")[:3])
    batch = Verification.objects.create(
        exercise_version=ex.current_version,
        status=Verification.Status.DONE,
        finished_at=timezone.now(),
        candidates=[{"entry": e.id, "user": e.user_id, "stored": True} for e in top],
    )
    Entry.objects.filter(id__in=[e.id for e in top]).update(verification=batch, verified_at=batch.finished_at)
    return course, assignment, item, students[0], instructor, job, ex


def pages(course, assignment, item: AssignmentItem, student, job, ex) -> dict[str, str]:
    c = course.pk
    return {
        "courses": "/courses/",
        "course": f"/courses/{c}/",
        "assignment": f"/courses/{c}/assignments/{assignment.pk}/",
        "item": f"/courses/{c}/items/{item.pk}/",
        "gradebook": f"/courses/{c}/gradebook/",
        "student": f"/courses/{c}/students/{student.pk}/",
        "roster": f"/courses/{c}/roster/",
        "analytics": f"/courses/{c}/analytics/",
        "job": f"/courses/{c}/jobs/{job.pk}/",
        "board-course": f"/boards/courses/{c}/",
        "board-exercise": f"/boards/exercises/{ex.slug}/",
        "board-exercise-course": f"/boards/exercises/{ex.slug}/course/{c}/",
        "new-assignment": f"/courses/{c}/assignments/new/",
        "profile": "/accounts/profile/",
    }


def test_classroom_pages_fit_a_phone_in_both_languages(live_server, chromium: Browser, classroom):
    course, assignment, item, student, instructor, job, ex = classroom
    shots = os.environ.get("GRAPHDOJO_SCREENSHOTS")
    for language, (locale, word) in LANGUAGES.items():
        context = chromium.new_context(locale=locale)
        page = context.new_page()
        page.goto(f"{live_server.url}/login/")
        page.locator("input[name=username]").fill("prof")
        page.locator("input[name=password]").fill("a-long-password-1")
        page.locator("form button[type=submit]").last.click()
        page.wait_for_url(f"{live_server.url}/")
        anonymous = {"signup": "/accounts/signup/", "password-reset": "/accounts/password-reset/"}
        for name, path in {**pages(course, assignment, item, student, job, ex), **anonymous}.items():
            for width_name, width in WIDTHS.items():
                page.set_viewport_size({"width": width, "height": 900})
                response = page.goto(live_server.url + path)
                assert response.status == 200, (name, response.status)
                if name in ("course", "board-course", "board-exercise", "gradebook", "analytics"):
                    assert word in page.content(), (name, language)
                if name in ("board-exercise", "board-exercise-course"):
                    assert page.locator("#board .verified").count() == 3, (name, language)
                    assert page.locator("#board .pooled").count() == 2, (name, language)
                if shots:
                    Path(shots).mkdir(parents=True, exist_ok=True)
                    page.screenshot(path=f"{shots}/{name}-{width_name}-{language}.png", full_page=True)
                overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
                assert overflow <= 1, f"{name} at {width}px in {language} is {overflow}px too wide"
        context.close()
