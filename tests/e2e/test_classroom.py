"""The classroom in a real Chromium, with a real Celery worker grading in the sandbox: an
instructor creates a course and an assignment; two students sign up, join with the code,
submit and share a rank on the board under pseudonyms; the instructor opens the gradebook,
exports the CSV, regrades the exercise and watches the progress bar finish."""

import csv
import io

import pytest
from django.utils import timezone
from playwright.sync_api import Browser, Page, expect

from accounts.models import User
from accounts.services import user_set_role
from catalog.services import content_sync
from courses.models import Membership
from leaderboards.models import Entry
from tests.e2e.journeys import assignment_create, course_create, course_join, log_in_as, write_code

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SLUG = "static-graph-executor"
TITLE = "A static graph executor"


def new_page(chromium: Browser) -> Page:
    context = chromium.new_context(locale="en-US", timezone_id="UTC")  # the assignment's times are typed in UTC
    context.set_default_timeout(15_000)
    return context.new_page()


def sign_up_join_and_submit(chromium: Browser, base_url: str, username: str, join_code: str, code: str) -> Page:
    page = new_page(chromium)
    page.goto(f"{base_url}/login/")
    page.get_by_role("main").get_by_role("link", name="Sign up").click()
    page.get_by_label("Username").fill(username)
    page.get_by_label("Email").fill(f"{username}@example.org")
    page.get_by_label("Password", exact=True).fill("a-long-password-1")
    page.get_by_label("Password confirmation").fill("a-long-password-1")
    page.get_by_role("button", name="Create my account").click()
    course_join(page, join_code, "Graphs 101")
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
    log_in_as(teacher, base, "prof", "a-long-password-1")
    join_code = course_create(teacher, "Graphs 101", "计算图入门")
    assignment_create(teacher, "Week 1", "第一周", timezone.now(), [TITLE])
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
