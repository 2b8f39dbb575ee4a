"""A timed quiz as a student lives it, in a real Chromium: start from the nav, answer every
type of question (each answer saved as it is given), reload without resetting the clock,
hand in, read the feedback; and a quiz whose clock runs out while the page is open."""
import re
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from accounts.models import User
from quizzes.models import Bank, QuizAttempt
from quizzes.services import quiz_content_sync, quiz_start_bank
from tests.e2e.journeys import fill_answer, log_in

pytestmark = [pytest.mark.browser, pytest.mark.slow]
BANK_TITLE = "Graphs: define-then-run and define-by-run"


@pytest.fixture
def banks(transactional_db, content_dir):
    report = quiz_content_sync(content_dir)
    assert not report.errors, report.errors


def test_a_student_takes_a_timed_quiz_end_to_end(live_server, page, banks):
    log_in(page, live_server.url)
    page.get_by_role("link", name="Quizzes").click()
    card = page.locator("article.bank", has_text=BANK_TITLE)
    expect(card.get_by_label(re.compile("Timed"))).to_be_checked()
    card.get_by_role("button", name="Start").click()
    expect(page).to_have_url(re.compile(r"/quizzes/attempts/\d+/$"))
    clock = page.locator("#clock")
    expect(clock.locator(".remaining")).to_have_text(re.compile(r"^1[34]:\d\d$"))  # 14 minutes

    attempt = QuizAttempt.objects.get()
    items = list(attempt.items.order_by("position"))
    assert {i.snapshot["type"] for i in items} >= {"single", "true_false", "ordering", "short_text", "code_output"}
    wrong = items[0].position  # one deliberate mistake, to see the review of mistakes
    for item in items:
        form = page.locator(f"#q{item.position}")
        fill_answer(form, item.snapshot, right=item.position != wrong)
        expect(form.locator(".save-state")).to_contain_text("Saved")

    deadline = clock.get_attribute("data-deadline-ms")
    page.reload()  # the server holds the deadline and the answers
    expect(page.locator("#clock")).to_have_attribute("data-deadline-ms", deadline)
    first_kind = items[1].snapshot["type"]
    if first_kind in ("single", "true_false"):
        expect(page.locator("#q2 input[name=answer]:checked")).to_have_count(1)
    assert all(i.response is not None for i in attempt.items.all())

    page.get_by_role("button", name="Hand in").click()
    expect(page.locator("#score")).to_have_attribute("data-status", "finished")
    expect(page.locator("#score-value")).to_have_text(str(len(items) - 1))
    expect(page.get_by_role("heading", name="Your mistakes")).to_be_visible()
    mistakes = page.locator("#mistakes ~ article.feedback[data-correct=false]")
    expect(mistakes).to_have_count(1)
    expect(mistakes.first.locator(".explanation")).to_have_text(items[0].snapshot["explanation"]["en"])
    page.get_by_role("link", name="Quizzes").first.click()
    expect(page.locator("#review")).to_contain_text("1 missed question is due for review")
    expect(page.locator("#quiz-history")).to_contain_text(BANK_TITLE)


def test_the_clock_runs_out_with_the_page_open(live_server, page, banks):
    log_in(page, live_server.url)
    student = User.objects.get(username="student")
    attempt = quiz_start_bank(user=student, bank=Bank.objects.get(uid="autograd-pitfalls"), timed=True)
    QuizAttempt.objects.filter(pk=attempt.pk).update(deadline=timezone.now() + timedelta(seconds=6))
    page.goto(f"{live_server.url}/quizzes/attempts/{attempt.pk}/")
    expect(page.locator("#clock .remaining")).to_have_text(re.compile(r"^0:0[0-6]$"))
    first = attempt.items.get(position=1)
    fill_answer(page.locator("#q1"), first.snapshot)
    expect(page.locator("#q1 .save-state")).to_contain_text("Saved")

    # At zero the page reloads itself and the server, which holds the deadline, closes the attempt.
    expect(page.locator("#score")).to_have_attribute("data-status", "expired", timeout=20_000)
    expect(page.get_by_role("alert")).to_contain_text("Time ran out")
    attempt.refresh_from_db()
    assert attempt.status == "expired" and attempt.score == 1.0

    # A late answer sent anyway is refused.
    csrf = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    late = page.request.post(f"{live_server.url}/quizzes/attempts/{attempt.pk}/items/2/",
                             form={"answer": "a"}, headers={"X-CSRFToken": csrf, "Referer": live_server.url})
    assert late.status == 409
    assert attempt.items.get(position=2).response is None
