"""Browser helpers shared by the end-to-end journeys (not a test module): the same steps drive
the site of `make run` (pytest-django's live server) and the compose stack (test_compose.py)."""

import re
from datetime import datetime, timedelta

from playwright.sync_api import Locator, Page, expect

from accounts.services import demo_accounts_ensure


def log_in(page: Page, base_url: str) -> None:
    username, password, _ = next(a for a in demo_accounts_ensure() if a[2] == "student")
    page.goto(f"{base_url}/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Exercises")).to_be_visible()


def log_in_as(page: Page, base_url: str, username: str, password: str) -> None:
    page.goto(f"{base_url}/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Exercises")).to_be_visible()


def course_create(page: Page, title: str, title_zh: str) -> str:
    """An instructor's new course, from the nav; its join code."""
    page.get_by_role("link", name="Courses").click()
    page.get_by_role("link", name="New course").click()
    page.get_by_label("title (English)").fill(title)
    page.get_by_label("title (Chinese)").fill(title_zh)
    page.get_by_label("term").fill("Spring 2027")
    page.get_by_role("button", name="Save").click()
    return page.locator("#join-code").inner_text()


def assignment_create(page: Page, title: str, title_zh: str, now: datetime, items: list[str]) -> None:
    """A week-long assignment of the course page the instructor is on, open since an hour
    before ``now`` (written in the page's time zone, which the browser context sets), with the
    items picked by their titles, as the instructor reads them (not by slug)."""
    page.get_by_role("link", name="New assignment").click()
    page.get_by_label("title (English)").fill(title)
    page.get_by_label("title (Chinese)").fill(title_zh)
    page.get_by_label("opens at").fill((now - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M"))
    page.get_by_label("due at").fill((now + timedelta(days=7)).strftime("%Y-%m-%dT%H:%M"))
    page.get_by_label("late policy").select_option("penalty")
    page.get_by_role("button", name="Save").click()
    for added, item in enumerate(items, start=1):
        page.get_by_label("Exercise, quiz or mock interview").select_option(label=item)
        page.get_by_role("button", name="Add").click()
        expect(page.locator("table.grid tbody tr", has_text=item)).to_have_count(1)
        expect(page.locator("table.grid tbody tr")).to_have_count(added)


def course_join(page: Page, join_code: str, title: str) -> None:
    """A student joins a course with its code, from the nav, and lands on the course's page."""
    page.get_by_role("link", name="Courses").click()
    page.get_by_label("Join code").fill(join_code)
    page.get_by_role("button", name="Join").click()
    expect(page.get_by_role("heading", name=re.compile(re.escape(title)))).to_be_visible()


def fill_answer(form: Locator, snapshot: dict, *, right: bool = True) -> None:
    """Answer one rendered question the way a student would: click, tick, pick or type."""
    kind, key = snapshot["type"], snapshot["key"]["answer"]
    ids = [c["id"] for c in snapshot["choices"]]
    if not right:  # a plausible wrong answer of the same kind
        if kind in ("single", "code_output") and ids:
            key = next(i for i in ids if i != key)
        elif kind == "multiple":
            key = [next(i for i in ids if i not in key)]
        elif kind == "true_false":
            key = not key
        elif kind == "numeric":
            key = key + 1000
        elif kind == "ordering":
            key = list(reversed(key))
        else:
            key = "something else"
    if kind == "single" or (kind == "code_output" and ids):
        form.locator(f'input[name="answer"][value="{key}"]').check()
    elif kind == "multiple":
        for choice_id in key:
            form.locator(f'input[name="answer"][value="{choice_id}"]').check()
    elif kind == "true_false":
        form.locator(f'input[name="answer"][value="{"true" if key else "false"}"]').check()
    elif kind == "ordering":
        for rank, choice_id in enumerate(key, start=1):
            form.locator(f'select[name="rank-{choice_id}"]').select_option(str(rank))
    elif kind == "numeric":
        form.locator('input[name="answer"]').fill(f"{key:g}")
    elif kind == "short_text":
        form.locator('input[name="answer"]').fill(str(key))
    else:
        form.locator('textarea[name="answer"]').fill(str(key))


def write_code(page: Page, code: str) -> None:
    """Put ``code`` in the exercise's editor, as pasting it would (the CodeMirror editor follows
    its form field; without JavaScript the field is the editor)."""
    page.locator("textarea[name=code]").evaluate(
        "(field, code) => { field.value = code; field.dispatchEvent(new Event('input')); }", code
    )
