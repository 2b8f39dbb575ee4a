"""The 30-minute ML-systems screen in a real Chromium, graded by a real Celery worker: one
question at a time under two clocks, a coding task through the normal pipeline, a scorecard
that fills in when the verdict arrives, and the attempt in the history."""
import re

import pytest
from playwright.sync_api import expect

from catalog.services import content_sync
from interviews.models import InterviewAttempt
from interviews.services import interview_templates_sync
from quizzes.services import quiz_content_sync
from tests.e2e.journeys import fill_answer, log_in, write_code

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SLUG = "static-graph-executor"
CLOCK = re.compile(r"^\d+:\d\d$")


def test_a_candidate_sits_the_ml_systems_screen(live_server, celery_worker_process, page, content_dir, settings):
    content = content_dir
    assert not content_sync(content).errors
    quizzes = quiz_content_sync(content)
    assert not interview_templates_sync(content=quizzes.content).errors
    solution = (content / "coding" / SLUG / "solution.py").read_text()

    log_in(page, live_server.url)
    page.get_by_role("link", name="Mock interviews").click()
    screen = page.locator("article.template", has_text="ML systems screen")
    screen.get_by_role("button", name="Start the interview").click()
    attempt = InterviewAttempt.objects.get()
    questions = list(attempt.items.filter(kind="question").order_by("position"))
    assert len(questions) == 7

    for number, item in enumerate(questions):
        expect(page.locator("#where")).to_contain_text(f"item {1 + (number if number < 4 else number - 4)} of")
        expect(page.locator("#section-clock .remaining")).to_have_text(CLOCK)
        expect(page.locator("#interview-clock .remaining")).to_have_text(CLOCK)
        expect(page.get_by_role("button", name=re.compile("Previous"))).to_have_count(0)  # no going back
        if number % 2 == 0:  # answer every other question right, skip the rest
            fill_answer(page.locator("#step-form"), item.snapshot)
        page.locator("#next").click()

    expect(page.locator("#where")).to_contain_text("Section 3 of 3")
    write_code(page, solution)
    page.get_by_role("button", name="Submit for grading and continue").click()

    expect(page.locator("#scorecard")).to_have_attribute("data-status", "finished")
    expect(page.locator("#by-topic tr[data-topic=coding]")).to_be_visible()
    page.evaluate("window.__sameDocument = true")
    expect(page.locator("#verdict")).to_have_attribute("data-kind", "ACCEPTED", timeout=120_000)  # htmx, no reload
    assert page.evaluate("window.__sameDocument") is True
    right = sum(1 for i in attempt.items.filter(kind="question") if i.correct)
    assert right == 4
    expect(page.locator("#total")).to_have_text(str(right + 5))  # the coding task is worth 5; no reload
    assert page.evaluate("window.__sameDocument") is True
    expect(page.locator("#study")).to_be_visible()

    page.get_by_role("link", name="Mock interviews").first.click()
    expect(page.locator("#interview-history")).to_contain_text("ML systems screen")
    expect(page.locator("#interview-history")).to_contain_text(f"{round(100 * (right + 5) / 12)}%")
