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
from tests.e2e.test_workbench import DESKTOP, PHONE, SCREENS, SLUG, fits, graded, log_in_as_student

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
    heading = page.get_by_role("heading", name="Learn how deep-learning frameworks run computation graphs")
    expect(heading).to_be_visible()
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
        graded(student, "starter_format_4", starter)
        accepted = graded(student, "accepted", (content / "coding" / SLUG / "solution.py").read_text())
        for viewport in (PHONE, DESKTOP):
            page.set_viewport_size(viewport)
            for name, path in [
                ("home", "/"), ("verdict-accepted-diff", f"/submissions/{accepted.pk}/"),
                ("boards", "/boards/"), ("board", f"/boards/exercises/{SLUG}/"),
                ("exercise-solved", f"/exercises/{SLUG}/"),
            ]:
                page.goto(live_server.url + path)
                if name.startswith("verdict"):
                    expect(page.locator("#your-rank a")).to_be_visible()
                    expect(page.locator("#changes")).to_be_visible()
                    expect(page.locator("#wrong-answers-link")).to_be_visible()
                if name == "exercise-solved":  # issue 23: the editorial, its first answer opened
                    editorial = page.locator("#wrong-answers")
                    expect(editorial.locator("li.wrong-answer")).to_have_count(5)
                    editorial.locator("details summary").first.click()
                    expect(editorial.locator("pre").first).to_be_visible()
                fits(page, f"{language}-{name}")
    finally:
        context.close()


@pytest.fixture
def lessons_signed_in(transactional_db, content_dir, settings, make_user, live_server, chromium):
    from django.test import Client

    from lessons.services import lessons_sync
    from quizzes.services import quiz_content_sync

    settings.CONTENT_DIR = content_dir
    assert not quiz_content_sync(content_dir).errors
    assert not lessons_sync(content_dir).errors
    client = Client()
    client.force_login(make_user("ada"))
    context = chromium.new_context(locale="en-US", viewport=PHONE)
    context.set_default_timeout(15_000)
    context.add_cookies([{"name": settings.SESSION_COOKIE_NAME,
                          "value": client.cookies[settings.SESSION_COOKIE_NAME].value, "url": live_server.url}])
    yield context.new_page()
    context.close()


def test_the_visualisations_are_readable_on_a_phone(live_server, lessons_signed_in):
    """Issue 28, fix 5: at 390 px node labels were about 6 px, the two columns drawn at different
    scales, the program dropdown ran 22 px out of its card, and the radar was 120 px wide."""
    page = lessons_signed_in
    page.goto(f"{live_server.url}/lessons/the-article-demos/")
    viz = page.locator("#viz-static-vs-dynamic")
    for _ in range(11):
        viz.get_by_role("button", name="Step").click()
    scales = page.evaluate("""() => [...document.querySelectorAll('#viz-static-vs-dynamic svg.graph-svg')]
        .map((svg) => svg.getScreenCTM().a)""")
    assert len(scales) == 2 and min(scales) > 0.99 and max(scales) < 1.01, scales  # one scale, labels at 11 px
    card, select = viz.bounding_box(), viz.locator("select.program-select").bounding_box()
    assert select["x"] + select["width"] <= card["x"] + card["width"], (select, card)
    fits(page, "en-lesson-demos")
    if SCREENS:
        viz.screenshot(path=f"{SCREENS}/en-viz-static-vs-dynamic-390.png")

    page.goto(f"{live_server.url}/lessons/performance/")
    wrap = page.locator("#viz-compile-flow .table-wrap")
    expect(wrap.locator("tbody tr").first).to_be_visible(timeout=30_000)
    fits(page, "en-lesson-performance")
    if SCREENS:
        page.locator("#viz-compile-flow").screenshot(path=f"{SCREENS}/en-viz-compile-flow-390.png")

    page.goto(f"{live_server.url}/lessons/choosing/")
    radar = page.locator("#viz-radar canvas").bounding_box()
    assert radar["width"] >= 300, radar
    fits(page, "en-lesson-choosing")
    if SCREENS:
        page.locator("#viz-radar").screenshot(path=f"{SCREENS}/en-viz-radar-390.png")


def test_times_show_in_the_viewers_time_zone(live_server, chromium, content):
    context = chromium.new_context(locale="en-US", timezone_id="Asia/Shanghai")
    context.set_default_timeout(15_000)
    page = context.new_page()
    try:
        log_in(page, live_server.url)
        student = User.objects.get(username=page.locator(".who").inner_text())
        mine = graded(student, "accepted", "x = 1\n")
        page.goto(f"{live_server.url}/exercises/{SLUG}/")
        when = page.locator('ul.history time[data-local]').first
        utc = mine.created_at.strftime("%Y-%m-%d %H:%M") + " UTC"
        expect(when).to_have_attribute("title", utc)  # the server's UTC stays one hover away
        expect(when).to_contain_text("GMT+8")
    finally:
        context.close()
