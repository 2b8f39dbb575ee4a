"""The thin path, as a student lives it: log in, open an exercise, edit, submit, watch the
verdict arrive without reloading. Real Chromium, real Celery worker, Redis and PostgreSQL."""
import re
import time

import pytest
from playwright.sync_api import expect

from catalog.services import content_sync
from grading.models import Submission
from tests.e2e.journeys import log_in, write_code

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SLUG = "static-graph-executor"


def submit(page, code: str) -> None:
    write_code(page, code)
    page.get_by_role("button", name="Submit").click()


def test_a_student_submits_and_sees_the_verdict_arrive(live_server, celery_worker_process, page, content_dir):
    report = content_sync(content_dir)
    assert not report.errors, report.errors
    solution = (content_dir / "coding" / SLUG / "solution.py").read_text()
    log_in(page, live_server.url)

    page.get_by_role("list").get_by_role("link", name="A static graph executor").click()  # not the "continue" card
    editor = page.locator("textarea[name=code]")
    expect(editor).to_have_value(re.compile("class StaticGraph"))  # the starter code

    started = time.monotonic()
    submit(page, solution)
    expect(page).to_have_url(re.compile(r"/submissions/\d+/$"))
    page.evaluate("window.__sameDocument = true")  # gone if the page reloads
    status = page.locator("#submission-status")
    expect(status).to_have_attribute("data-status", re.compile("queued|running"))
    expect(page.locator("#verdict")).to_have_attribute("data-kind", "ACCEPTED", timeout=120_000)
    elapsed = time.monotonic() - started
    assert page.evaluate("window.__sameDocument") is True
    expect(page.locator("ul.checks li.pass").first).to_be_visible()
    print(f"submit to verdict: {elapsed:.1f} s")

    submission = Submission.objects.get()
    assert (submission.status, submission.verdict, submission.score) == ("graded", "ACCEPTED", 1.0)


def test_a_wrong_submission_gets_per_check_feedback(live_server, celery_worker_process, page, content_dir):
    content_sync(content_dir)
    seed_demo = (content_dir / "coding" / SLUG / "starter.py").read_text()
    log_in(page, live_server.url)
    page.goto(f"{live_server.url}/exercises/{SLUG}/")
    submit(page, seed_demo)
    verdict = page.locator("#verdict")
    expect(verdict).to_have_attribute("data-kind", re.compile("WRONG_ANSWER|PARTIAL|RUNTIME_ERROR"), timeout=120_000)
    expect(page.locator("ul.checks li.fail").first).to_be_visible()
    assert Submission.objects.get().score < 1
