"""The classroom in a real Chromium, with a real Celery worker grading in the sandbox: an
instructor creates a course and an assignment; two students sign up, join with the code,
submit and share a rank on the board under pseudonyms; the instructor opens the gradebook,
exports the CSV, regrades the exercise and watches the progress bar finish."""

import csv
import io
import re
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import Browser, Page, expect

from accounts.models import User
from accounts.services import user_set_role
from catalog.services import content_sync
from courses.models import Membership
from leaderboards.models import Entry
from tests.e2e.journeys import write_code

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SLUG = "static-graph-executor"
TITLE = "A static graph executor"


def new_page(chromium: Browser) -> Page:
    context = chromium.new_context(locale="en-US")
    context.set_default_timeout(15_000)
    return context.new_page()


def log_in(page: Page, base_url: str, username: str, password: str) -> None:
    page.goto(f"{base_url}/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Exercises")).to_be_visible()


def sign_up_join_and_submit(chromium: Browser, base_url: str, username: str, join_code: str, code: str) -> Page:
    page = new_page(chromium)
    page.goto(f"{base_url}/login/")
    page.get_by_role("main").get_by_role("link", name="Sign up").click()
    page.get_by_label("Username").fill(username)
    page.get_by_label("Email").fill(f"{username}@example.org")
    page.get_by_label("Password", exact=True).fill("a-long-password-1")
    page.get_by_label("Password confirmation").fill("a-long-password-1")
    page.get_by_role("button", name="Create my account").click()
    page.get_by_role("link", name="Courses").click()
    page.get_by_label("Join code").fill(join_code)
    page.get_by_role("button", name="Join").click()
    expect(page.get_by_role("heading", name=re.compile("Graphs 101"))).to_be_visible()
    page.get_by_role("link", name=TITLE).click()
    write_code(page, code)
    page.get_by_role("button", name="Submit", exact=True).click()
    expect(page.locator("#verdict")).to_have_attribute("data-kind", "ACCEPTED", timeout=180_000)
    return page


def test_a_class_from_course_creation_to_regrade(live_server, celery_worker_process, chromium, content_dir, tmp_path):
    report = content_sync(content_dir)
    assert not report.errors, report.errors
    solution = (content_dir / "coding" / SLUG / "solution.py").read_text()
    base = live_server.url
    prof = User.objects.create_user("prof", password="a-long-password-1", first_name="Pat", last_name="Prof")
    user_set_role(prof, User.Role.INSTRUCTOR)

    teacher = new_page(chromium)
    log_in(teacher, base, "prof", "a-long-password-1")
    teacher.get_by_role("link", name="Courses").click()
    teacher.get_by_role("link", name="New course").click()
    teacher.get_by_label("title (English)").fill("Graphs 101")
    teacher.get_by_label("title (Chinese)").fill("计算图入门")
    teacher.get_by_label("term").fill("Spring 2027")
    teacher.get_by_role("button", name="Save").click()
    join_code = teacher.locator("#join-code").inner_text()
    teacher.get_by_role("link", name="New assignment").click()
    teacher.get_by_label("title (English)").fill("Week 1")
    teacher.get_by_label("title (Chinese)").fill("第一周")
    now = timezone.now()
    teacher.get_by_label("opens at").fill((now - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M"))
    teacher.get_by_label("due at").fill((now + timedelta(days=7)).strftime("%Y-%m-%dT%H:%M"))
    teacher.get_by_label("late policy").select_option("penalty")
    teacher.get_by_role("button", name="Save").click()
    teacher.get_by_label("Exercise, quiz or mock interview").select_option(label=TITLE)  # by title, not by slug
    teacher.get_by_role("button", name="Add").click()
    expect(teacher.get_by_role("link", name=TITLE)).to_be_visible()

    ada = sign_up_join_and_submit(chromium, base, "ada", join_code, solution)
    ada_name = Membership.objects.get(user__username="ada").pseudonym  # the course's own name for her
    ada.goto(f"{base}/courses/")
    ada.get_by_role("link", name="Graphs 101").click()
    ada.get_by_role("link", name="Leaderboard", exact=True).first.click()
    board = ada.locator("table.leaderboard")
    expect(board).to_contain_text(ada_name)
    expect(board).not_to_contain_text("ada@")  # a pseudonym, never the account

    # The same code by a second student: their 95 % intervals overlap, so they share rank 1.
    bob = sign_up_join_and_submit(chromium, base, "bob", join_code, solution)
    entries = list(Entry.objects.order_by("user__username"))
    assert entries[0].ratio_low <= entries[1].ratio_high and entries[1].ratio_low <= entries[0].ratio_high
    bob_name = Membership.objects.get(user__username="bob").pseudonym
    expect(board.locator("tr", has_text=bob_name).locator("td.rank")).to_have_text("=1", timeout=15_000)  # live
    expect(board.locator("tr", has_text=ada_name).locator("td.rank")).to_have_text("=1")
    bob.context.close()

    teacher.get_by_role("link", name="Gradebook").click()
    expect(teacher.locator("table.gradebook")).to_contain_text("ada")
    with teacher.expect_download() as download:
        teacher.locator("#export-csv").click()
    path = tmp_path / "gradebook.csv"
    download.value.save_as(path)
    rows = list(csv.reader(io.StringIO(path.read_text())))
    assert rows[0][:3] == ["Student", "ID", "SIS Login ID"]
    assert {r[2]: r[5] for r in rows[2:]} == {"ada": "10", "bob": "10"}

    teacher.get_by_role("link", name="Week 1").click()
    asked = []
    teacher.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.accept()))
    teacher.get_by_role("button", name="Regrade all").click()
    expect(teacher.locator("progress")).to_be_visible()
    expect(teacher.locator("#job-finished")).to_be_visible(timeout=300_000)
    assert teacher.locator("progress").get_attribute("value") == "2"
    assert asked and "Scores may change" in asked[0]  # a regrade asks first
    ada.context.close()
    teacher.context.close()
