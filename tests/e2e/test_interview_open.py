"""An open-ended interview in a real Chromium: quick questions, then a diagnosis problem
written in the candidate's words, its follow-ups in the flow, and a scorecard where the
candidate reads the model answer and scores the answer against the rubric."""
import re

import pytest
from playwright.sync_api import expect

from interviews.models import InterviewAttempt
from interviews.services import interview_templates_sync
from quizzes.services import quiz_content_sync
from tests.e2e.journeys import log_in

pytestmark = [pytest.mark.browser, pytest.mark.slow]
ANSWER = "Time after a warm-up and synchronise; then read TORCH_LOGS=recompiles for failing guards."


def test_a_candidate_answers_an_open_question_and_scores_it(live_server, page, content_dir, transactional_db):
    quizzes = quiz_content_sync(content_dir)
    assert not interview_templates_sync(content=quizzes.content).errors

    log_in(page, live_server.url)
    page.get_by_role("link", name="Mock interviews").click()
    page.locator("article.template", has_text="diagnosis and design").get_by_role(
        "button", name="Start the interview").click()
    attempt = InterviewAttempt.objects.get()
    for _ in range(attempt.items.filter(kind="question").count()):  # the warm-up, skipped
        page.locator("#next").click()

    expect(page.locator("#where")).to_contain_text("Section 2 of 3")
    expect(page.locator("#step-form .prompt")).to_contain_text("slower than eager")
    expect(page.get_by_text("Model answer", exact=True)).to_have_count(0)  # nothing of the answer before answering
    page.get_by_label("Your answer").fill(ANSWER)
    page.locator("#next").click()
    expect(page.locator("#step-form .tag")).to_have_text("Follow-up")
    expect(page.locator("#step-form .prompt")).to_contain_text("self.step == 41")
    page.once("dialog", lambda dialog: dialog.accept())
    page.locator("#end-now").click()

    expect(page.locator("#scorecard")).to_have_attribute("data-status", "finished")
    review = page.locator("article.open-review").first
    expect(review.locator(".open-answer")).to_have_text(ANSWER)
    expect(review.locator(".model-answer")).to_contain_text("TORCH_LOGS=recompiles")
    review.get_by_label(re.compile("Separates compile time from steady state")).check()
    review.get_by_label(re.compile("Looks for recompilation")).check()
    review.get_by_role("button", name="Save my score").click()
    review = page.locator("article.open-review").first
    # the rubric also scores profiling and allocator work now
    expect(review.locator(".self-score")).to_have_text("4 / 9")
    expect(page.locator("#total")).to_have_text("4")
    expect(page.locator("article.open-review").nth(1).get_by_role("button", name="Save my score")).to_have_count(0)
