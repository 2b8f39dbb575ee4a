"""The invitation a roster sends, as the invited student meets it in a browser: the claim page
at desktop width and at 390 px in English and Chinese, then an account made from it and the
course it opens; the instructor's roster shows the claim. GRAPHDOJO_SCREENSHOTS=<dir> keeps
a screenshot of each page."""

import os
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from courses.models import Invitation, Membership
from courses.services import invitation_link
from tests.platform import classroom as make

pytestmark = [pytest.mark.browser, pytest.mark.slow]
WIDTHS = {"desktop": 1280, "phone": 390}
LANGUAGES = {"en": ("en-US", "Create your account"), "zh": ("zh-CN", "创建你的账号")}


def shoot(page, name: str) -> None:
    shots = os.environ.get("GRAPHDOJO_SCREENSHOTS")
    if shots:
        Path(shots).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=f"{shots}/{name}.png", full_page=True)
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 1, f"{name} is {overflow}px too wide"


def test_an_invited_student_claims_the_place_in_a_browser(live_server, chromium: Browser, transactional_db):
    course = make.course(make.user("prof", role="instructor"))
    waiting = Invitation.objects.create(course=course, email="grace@uni.example", name="Grace Hopper")
    invitation = Invitation.objects.create(
        course=course, email="ada.lovelace-with-a-long-address@uni.example", username="s1001", name="Ada Lovelace"
    )
    link = invitation_link(invitation, live_server.url)
    for language, (locale, heading) in LANGUAGES.items():
        context = chromium.new_context(locale=locale)
        page = context.new_page()
        for width_name, width in WIDTHS.items():
            page.set_viewport_size({"width": width, "height": 900})
            assert page.goto(link).status == 200
            expect(page.get_by_role("heading", name=heading)).to_be_visible()
            shoot(page, f"invitation-{width_name}-{language}")
        context.close()

    context = chromium.new_context(locale="en-US")
    page = context.new_page()
    page.goto(link)
    page.get_by_label("Username").fill("ada")
    page.get_by_label("Password", exact=True).fill("a-long-password-9")
    page.get_by_label("Password confirmation").fill("a-long-password-9")
    page.get_by_role("button", name="Create my account and join").click()
    expect(page.get_by_role("heading", name="Graphs 101")).to_be_visible()
    assert Membership.objects.filter(course=course, user__username="ada", role="student").exists()
    assert page.goto(link).status == 400  # used: the link opens nothing any more
    context.close()

    for language, (locale, claimed) in {"en": ("en-US", "Claimed by ada"), "zh": ("zh-CN", "已接受")}.items():
        context = chromium.new_context(locale=locale)
        page = context.new_page()
        page.goto(f"{live_server.url}/login/")
        page.locator("input[name=username]").fill("prof")
        page.locator("input[name=password]").fill("a-long-password-1")
        page.locator("form button[type=submit]").last.click()
        page.wait_for_url(f"{live_server.url}/")
        for width_name, width in WIDTHS.items():
            page.set_viewport_size({"width": width, "height": 900})
            assert page.goto(f"{live_server.url}/courses/{course.pk}/roster/").status == 200
            expect(page.locator("body")).to_contain_text(claimed)
            expect(page.locator("body")).to_contain_text(waiting.email)
            shoot(page, f"roster-{width_name}-{language}")
        context.close()
