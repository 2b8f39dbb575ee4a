"""Issue 28 in a real Chromium: the stumbles a first-time student met, each walked into
again. Ctrl+Enter submits from the editor, an empty submit and an oversized draft say why,
a visitor learns what the site is, the boards are in the menu and the verdict says where the
code stands and what comes next; every page touched fits a phone and passes the audit in
both languages (GRAPHDOJO_SCREENSHOTS=/some/dir keeps a screenshot of each)."""
import re

import pytest
from django.conf import settings
from playwright.sync_api import expect

from accounts.models import User
from grading.models import Submission
from tests.e2e.journeys import log_in, write_code
from tests.e2e.test_workbench import DESKTOP, PHONE, SLUG, content, fits, graded, log_in_as_student  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_ctrl_enter_in_the_editor_submits(live_server, page, content):
    log_in(page, live_server.url)
    page.goto(f"{live_server.url}/exercises/{SLUG}/")
    editor = page.locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+a")
    page.keyboard.type("x = 1")
    page.keyboard.press("Control+Enter")
    expect(page).to_have_url(re.compile(r"/submissions/\d+/$"))
    assert Submission.objects.get().code == "x = 1"  # submitted as typed: no blank line added


def test_an_empty_submit_and_an_oversized_draft_say_why(live_server, page, content):
    log_in(page, live_server.url)
    page.goto(f"{live_server.url}/exercises/{SLUG}/")
    write_code(page, "")
    page.get_by_role("button", name="Submit", exact=True).click()
    expect(page.get_by_role("alert")).to_have_text("Your submission is empty: write some code first.")
    assert not Submission.objects.exists()

    limit = settings.SUBMISSION_MAX_BYTES
    write_code(page, "# " + "x" * limit + "\n")  # past both the limit and a keepalive body's 64 KiB
    expect(page.locator("#draft-state")).to_have_text(re.compile(rf"the limit is {limit} bytes"), timeout=15_000)


def test_a_visitor_lands_on_what_the_site_is(live_server, page, content):
    page.goto(live_server.url + "/")
    expect(page.get_by_role("heading", name="Learn how deep-learning frameworks run computation graphs")).to_be_visible()
    expect(page.get_by_role("link", name="Sign up, free")).to_be_visible()


def test_from_the_menu_to_the_board_and_from_the_verdict_to_the_next_exercise(live_server, page, content):
    log_in(page, live_server.url)
    student = User.objects.get(username=page.locator(".who").inner_text())
    expect(page.locator("#continue")).to_contain_text("Start here")
    accepted = graded(student, "accepted", (content / "coding" / SLUG / "solution.py").read_text())
    page.goto(f"{live_server.url}/submissions/{accepted.pk}/")
    expect(page.locator("#your-rank")).to_contain_text("Not on the leaderboard yet")  # loaded after the verdict
    expect(page.locator("#next-step a.button")).to_contain_text("Next exercise:")
    page.get_by_role("navigation").get_by_role("link", name="Leaderboards").click()
    expect(page.get_by_role("heading", name="Leaderboards")).to_be_visible()
    page.locator("#boards").get_by_role("link", name="A static graph executor").click()
    expect(page).to_have_url(re.compile(rf"/boards/exercises/{SLUG}/$"))


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_pages_touched_fit_a_phone_in_both_languages(live_server, chromium, content, language):
    context = chromium.new_context(locale="zh-CN" if language == "zh-hans" else "en-US")
    context.set_default_timeout(15_000)
    page = context.new_page()
    try:
        for viewport in (PHONE, DESKTOP):
            page.set_viewport_size(viewport)
            page.goto(live_server.url + "/")
            fits(page, f"{language}-welcome")
        log_in_as_student(page, live_server.url, language)
        student = User.objects.get(username=page.locator(".who").inner_text())
        starter = (content / "coding" / SLUG / "starter.py").read_text()
        graded(student, "starter_with_message_ids", starter)
        accepted = graded(student, "accepted", (content / "coding" / SLUG / "solution.py").read_text())
        for viewport in (PHONE, DESKTOP):
            page.set_viewport_size(viewport)
            for name, path in [
                ("home", "/"), ("verdict-accepted-diff", f"/submissions/{accepted.pk}/"),
                ("boards", "/boards/"), ("board", f"/boards/exercises/{SLUG}/"),
            ]:
                page.goto(live_server.url + path)
                if name.startswith("verdict"):
                    expect(page.locator("#your-rank a")).to_be_visible()
                    expect(page.locator("#changes")).to_be_visible()
                fits(page, f"{language}-{name}")
    finally:
        context.close()
