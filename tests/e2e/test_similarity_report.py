"""An instructor in a real browser: from the assignment to its similarity report, a copied pair
side by side with the matched lines marked, and the copier's board entry held for review; at
1280 and 390 px, in English and in Chinese, nothing but a scroller wider than the screen. Set
GRAPHDOJO_SCREENSHOTS=<dir> to keep a screenshot of each page."""

import os
from pathlib import Path

import pytest
from playwright.sync_api import Browser

from leaderboards.models import Entry
from similarity.tasks import fingerprint_submission
from tests.platform import classroom as make

pytestmark = [pytest.mark.browser, pytest.mark.slow]
WIDTHS = {"desktop": 1280, "phone": 390}
LANGUAGES = {"en": ("en-US", "Similarity report", "Hold board entry", "held for review"),
             "zh": ("zh-CN", "相似度报告", "暂扣排行榜成绩", "待审查，已暂扣")}
EXERCISES = Path(__file__).resolve().parents[2] / "exercises" / "coding"
ORIGINAL = (EXERCISES / "scalar-autograd" / "solution.py").read_text()
COPY = "# mine\n" + ORIGINAL.replace("other", "rhs").replace("out", "res").replace("Value", "Scalar")
OTHER = (EXERCISES / "static-graph-executor" / "solution.py").read_text()


@pytest.fixture
def classroom(transactional_db):
    ex = make.exercise("graph-ex")
    students = [make.user(f"student{i}", first_name=f"Student{i}", last_name="Example") for i in range(3)]
    instructor = make.user("prof", role="instructor", first_name="Pat", last_name="Prof")
    course = make.course(instructor, students=students)
    assignment, _item = make.assignment(course, ex)
    for student, code in zip(students, [ORIGINAL, COPY, OTHER], strict=True):
        fingerprint_submission.apply(args=[make.graded(student, ex, code=code).id])
    return course, assignment, students


def test_an_instructor_reads_the_report_and_holds_a_copy(live_server, chromium: Browser, classroom):
    course, assignment, students = classroom
    shots = os.environ.get("GRAPHDOJO_SCREENSHOTS")
    for language, (locale, link, hold, held) in LANGUAGES.items():
        Entry.objects.update(held_at=None, held_by=None)
        context = chromium.new_context(locale=locale)
        context.set_default_timeout(15_000)
        page = context.new_page()
        page.goto(f"{live_server.url}/login/")
        page.locator("input[name=username]").fill("prof")
        page.locator("input[name=password]").fill("a-long-password-1")
        page.locator("form button[type=submit]").last.click()
        page.wait_for_url(f"{live_server.url}/")
        page.goto(f"{live_server.url}/courses/{course.pk}/assignments/{assignment.pk}/")
        page.get_by_role("link", name=link).click()
        page.wait_for_url(f"**/similarity/courses/{course.pk}/assignments/{assignment.pk}/")
        assert page.locator("tr.pair").count() == 1
        row = page.locator("tr.pair").first
        assert "Student0" in row.inner_text() and "Student1" in row.inner_text()
        assert "Student2" not in page.content()  # independent code is in no pair
        report_url = page.url
        row.locator("a").last.click()  # side by side
        page.wait_for_url("**/pairs/**")
        assert page.locator(".line.matched").count() > 50
        pair_url = page.url
        page.goto(report_url)
        page.locator("tr.pair").first.get_by_role("button", name=hold).first.click()
        page.wait_for_url(report_url)
        assert held in page.locator("tr.pair").first.inner_text()
        assert Entry.objects.filter(held_at__isnull=False).count() == 1
        for name, url in {"report": report_url, "pair": pair_url}.items():
            for width_name, width in WIDTHS.items():
                page.set_viewport_size({"width": width, "height": 900})
                assert page.goto(url).status == 200
                if shots:
                    Path(shots).mkdir(parents=True, exist_ok=True)
                    page.screenshot(path=f"{shots}/similarity-{name}-{width_name}-{language}.png", full_page=True)
                overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
                assert overflow <= 1, f"{name} at {width}px in {language} is {overflow}px too wide"
        context.close()
