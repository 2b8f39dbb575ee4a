"""The student's workbench in a real Chromium: pages that fit a phone, an editor that
indents with Tab and keeps drafts, the starter one click away, error pages in the site's
look, and a Chinese verdict page with no English left in it.

axe-core (tests/e2e/vendor/axe-core) audits every main page. Set GRAPHDOJO_SCREENSHOTS=/some/dir
to keep a screenshot of every page visited."""
import json
import os
import re
from pathlib import Path

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from accounts.models import User
from catalog.models import Exercise
from grading.models import Submission
from tests.e2e.journeys import log_in

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SLUG = "static-graph-executor"
VERDICTS = Path(__file__).parents[1] / "platform" / "workbench" / "verdicts"
SCREENS = os.environ.get("GRAPHDOJO_SCREENSHOTS")
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}

# Words a Chinese page may show in Latin letters: names of things, keys, units.
LATIN_ALLOWED = {"GraphDojo", "GPU", "Tab", "Esc", "Ctrl", "Enter", "Mac", "MB", "dtype"}
VISIBLE_TEXT = """() => {
  const skip = "code, pre, script, style, noscript, option, textarea, .cm-editor, .who";
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const out = [];
  while (walker.nextNode()) {
    const node = walker.currentNode;
    if (!node.parentElement.closest(skip) && node.textContent.trim()) out.push(node.textContent.trim());
  }
  return out.join(" | ");
}"""


def graded(user: User, name: str, code: str) -> Submission:
    result = json.loads((VERDICTS / f"{name}.json").read_text())
    return Submission.objects.create(
        user=user, exercise_version=Exercise.objects.get(slug=SLUG).current_version, code=code,
        status=Submission.Status.GRADED, verdict=result["verdict"], score=result["score"], result=result,
        finished_at=timezone.now(),
    )


AXE = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"


def audit(page, name: str) -> None:
    """axe-core finds no serious or critical accessibility violation on the page."""
    page.add_script_tag(path=str(AXE))
    found = page.evaluate("async () => (await axe.run(document, {resultTypes: ['violations']})).violations")
    bad = [f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:3]}"
           for v in found if v["impact"] in ("serious", "critical")]
    assert not bad, f"{name}: " + "\n".join(bad)


def fits(page, name: str) -> None:
    """The page is no wider than the viewport (nothing runs off a phone's screen), and at
    desktop width it passes the accessibility audit."""
    width = page.evaluate("document.documentElement.scrollWidth")
    viewport = page.evaluate("window.innerWidth")
    if SCREENS:
        Path(SCREENS).mkdir(parents=True, exist_ok=True)
        # CodeMirror measures lines as they scroll into view; show it measured, as a reader sees it.
        for editor in page.locator(".cm-editor").all():
            editor.scroll_into_view_if_needed()
        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(path=f"{SCREENS}/{name}-{viewport}.png", full_page=True)
    assert width <= viewport, f"{name}: the page is {width} px wide in a {viewport} px viewport"
    if viewport == DESKTOP["width"]:
        audit(page, name)


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_every_main_page_fits_a_phone(live_server, chromium, content, language):
    context = chromium.new_context(locale="zh-CN" if language == "zh-hans" else "en-US")
    context.set_default_timeout(15_000)
    page = context.new_page()
    try:
        log_in_as_student(page, live_server.url, language)
        student = User.objects.get(username=page.locator(".who").inner_text())
        starter = (content / "coding" / SLUG / "starter.py").read_text()
        partial = graded(student, "starter_format_4", starter)
        broken = graded(student, "syntax_error", "class StaticGraph:\n    def __init__(self)\n        pass\n")
        accepted = graded(student, "accepted", (content / "coding" / SLUG / "solution.py").read_text())
        for viewport in (PHONE, DESKTOP):
            page.set_viewport_size(viewport)
            for name, path in [
                ("exercises", "/"), ("exercise", f"/exercises/{SLUG}/"),
                ("verdict", f"/submissions/{partial.pk}/"), ("verdict-syntax", f"/submissions/{broken.pk}/"),
                ("verdict-accepted", f"/submissions/{accepted.pk}/"), ("quizzes", "/quizzes/"),
                ("interviews", "/interviews/"), ("not-found", "/no/such/page/"),
            ]:
                page.goto(live_server.url + path)
                fits(page, f"{language}-{name}")
        page.goto(live_server.url + "/quizzes/")
        page.locator("article.bank").first.get_by_role("button", name=re.compile("Start|开始")).click()
        expect(page).to_have_url(re.compile(r"/quizzes/attempts/\d+/$"))
        for viewport in (DESKTOP, PHONE):
            page.set_viewport_size(viewport)
            fits(page, f"{language}-quiz")
        page.goto(live_server.url + "/interviews/")
        page.locator("article.template").first.locator("button[type=submit]").click()
        for viewport in (DESKTOP, PHONE):
            page.set_viewport_size(viewport)
            fits(page, f"{language}-interview")
        page.on("dialog", lambda dialog: dialog.accept())
        page.locator("#end-now").click()
        expect(page.locator("#scorecard")).to_be_visible()
        for viewport in (DESKTOP, PHONE):
            page.set_viewport_size(viewport)
            fits(page, f"{language}-scorecard")
    finally:
        context.close()


def log_in_as_student(page, base_url: str, language: str) -> None:
    if language == "en":
        log_in(page, base_url)
        return
    from accounts.services import demo_accounts_ensure

    username, password, _ = next(a for a in demo_accounts_ensure() if a[2] == "student")
    page.goto(f"{base_url}/login/")
    page.locator("input[name=username]").fill(username)
    page.locator("input[name=password]").fill(password)
    page.locator("form button[type=submit]").last.click()
    expect(page.get_by_role("heading", name="练习")).to_be_visible()


def test_the_editor_indents_with_tab_keeps_a_draft_and_restores_the_starter(live_server, page, content):
    log_in(page, live_server.url)
    page.goto(f"{live_server.url}/exercises/{SLUG}/")
    starter = (content / "coding" / SLUG / "starter.py").read_text()
    field = page.locator("textarea[name=code]")
    editor = page.locator(".cm-content")
    expect(editor).to_be_visible()
    expect(page.locator(".cm-lineNumbers")).to_be_visible()

    editor.click()
    page.keyboard.press("Control+a")
    page.keyboard.type("x = 1")
    page.keyboard.press("Home")
    page.keyboard.press("Tab")
    expect(field).to_have_value("    x = 1")  # Tab indented, and focus stayed in the editor
    assert page.evaluate("document.activeElement.closest('.cm-editor') !== null")
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")  # the documented way out
    assert page.evaluate("document.activeElement.closest('.cm-editor') === null")

    expect(page.locator("#draft-state")).to_have_text("Draft saved")
    page.reload()
    expect(page.locator("textarea[name=code]")).to_have_value("    x = 1")  # the draft came back

    page.get_by_role("button", name="Reset to the starter code").click()
    expect(page.locator("textarea[name=code]")).to_have_value(starter)


def test_error_pages_have_the_site_look(live_server, page, content):
    log_in(page, live_server.url)
    response = page.goto(f"{live_server.url}/exercises/no-such-exercise/")
    assert response.status == 404
    expect(page.get_by_role("heading", name="Page not found")).to_be_visible()
    expect(page.get_by_role("navigation").get_by_role("link", name="Exercises")).to_be_visible()
    response = page.goto(f"{live_server.url}/authoring/")  # an instructor's page
    assert response.status == 403
    expect(page.get_by_role("heading", name="Not allowed")).to_be_visible()
    expect(page.get_by_role("navigation").get_by_role("link", name="Quizzes")).to_be_visible()


def test_a_chinese_verdict_page_has_no_english_outside_code(live_server, chromium, content):
    context = chromium.new_context(locale="zh-CN")
    page = context.new_page()
    try:
        log_in_as_student(page, live_server.url, "zh-hans")
        student = User.objects.get(username=page.locator(".who").inner_text())
        starter = (content / "coding" / SLUG / "starter.py").read_text()
        # wrong_answer_format_3: a checks.py's own words and value names, in both languages.
        for name in ("starter_format_4", "syntax_error", "accepted_with_message_ids", "wrong_answer_format_3"):
            submission = graded(student, name, starter)
            page.goto(f"{live_server.url}/submissions/{submission.pk}/")
            page.locator("details").evaluate_all("(all) => all.forEach((d) => d.open = true)")
            text = page.evaluate(VISIBLE_TEXT)
            prose = re.sub(r"[A-Za-z_][\w.]*\(\)", "", text)  # calls such as execute() are code
            english = sorted({w for w in re.findall(r"[A-Za-z][A-Za-z_]+", prose) if w not in LATIN_ALLOWED})
            assert not english, f"{name}: English on the Chinese page: {english}\n{text}"
    finally:
        context.close()


def test_running_the_visible_checks_gives_feedback_and_no_submission(live_server, celery_worker_process, page, content):
    from workbench.models import PracticeRun

    log_in(page, live_server.url)
    page.goto(f"{live_server.url}/exercises/{SLUG}/")
    page.evaluate("window.__sameDocument = true")
    page.get_by_role("button", name="Run the visible checks").click()  # on the starter code
    result = page.locator("#practice-result")
    expect(result).to_have_attribute("data-status", "done", timeout=120_000)
    expect(page.locator("#practice-headline")).to_contain_text("visible checks failed")
    expect(result.locator("li.check.pass").first).to_be_visible()
    assert page.evaluate("window.__sameDocument") is True  # no reload
    run = PracticeRun.objects.get()
    assert {c["visible"] for c in run.result["checks"]} == {True} and run.result["perf"] is None
    assert not Submission.objects.exists()  # never scored, never on a leaderboard
