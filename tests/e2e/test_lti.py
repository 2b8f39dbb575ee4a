"""An LMS course in a real Chromium, with lti1p3platform's platform as the LMS and a real Celery
worker grading in the sandbox: the instructor opens GraphDojo from the LMS and deep links an
exercise, the student opens it from the LMS, submits, and the score arrives in the LMS's gradebook
(the AGS score POST the platform received); the instructor syncs the roster and sees the LMS's
members. An LMS registers GraphDojo dynamically in its own frame, which the tool's page closes.
Then every LTI page at 1280 and 390 px in English and Chinese (screenshots in
$GRAPHDOJO_SCREENSHOTS, e.g. /tmp/lti-shots)."""

import os
import time
from pathlib import Path
from urllib.parse import urlparse

import pytest
from django.conf import settings
from django.test import Client
from lti_tool.models import LtiRegistration
from playwright.sync_api import Browser, BrowserContext, Page, expect

from accounts.models import User
from catalog.services import content_sync
from courses.models import Course
from lti.models import GradeSync, LinkedCourse, LinkedItem
from lti.registration import registration_link_create
from lti.services import account_link, keys_rotate, membership_set, roster_sync
from tests.e2e.journeys import write_code
from tests.platform.lti.conftest import registration_for
from tests.platform.lti.lms import INSTRUCTOR, LEARNER, LIS, Lms

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SLUG = "static-graph-executor"
TITLE = "A static graph executor"
WIDTHS = {"desktop": 1280, "phone": 390}
LANGUAGES = {"en": "en-US", "zh": "zh-CN"}


def new_page(chromium: Browser, locale: str = "en-US") -> Page:
    context = chromium.new_context(locale=locale)
    context.set_default_timeout(15_000)
    return context.new_page()


def signed_in(context: BrowserContext, live_server, user: User) -> BrowserContext:
    """The browser carries the user's session (made by Django's test client, not a login form)."""
    client = Client()
    client.force_login(user)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
    context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "url": live_server.url}])
    return context


@pytest.fixture
def lms(live_server):
    keys_rotate()
    platform = Lms(live_server.url, host=urlparse(live_server.url).hostname or "localhost").start()
    platform.add_person("teacher", "Pat Teacher", INSTRUCTOR)
    platform.add_person("student", "Sam Student", LEARNER)
    registration_for(platform)
    yield platform
    platform.stop()


def test_an_lms_course_from_deep_link_to_the_grade_in_its_gradebook_and_the_roster_from_the_lms(
    live_server, celery_worker_process, chromium, content_dir, lms
):
    report = content_sync(content_dir)
    assert not report.errors, report.errors
    solution = (content_dir / "coding" / SLUG / "solution.py").read_text()

    teacher = new_page(chromium)
    teacher.goto(lms.start_url("teacher"))  # OIDC login at the tool, the LMS's signed deep-linking request
    expect(teacher.get_by_role("heading", name="Add GraphDojo items to your LMS")).to_be_visible()
    teacher.get_by_label(TITLE).check()
    teacher.get_by_role("button", name="Add to the LMS").click()
    expect(teacher.get_by_role("heading", name="Placed in the LMS")).to_be_visible()  # the LMS's page
    [link] = lms.links.values()
    assert link.title == TITLE and link.lineitem

    student = new_page(chromium)
    student.goto(lms.start_url("student", link.id))
    expect(student.get_by_role("heading", name=TITLE)).to_be_visible()
    write_code(student, solution)
    student.get_by_role("button", name="Submit", exact=True).click()
    expect(student.locator("#verdict")).to_have_attribute("data-kind", "ACCEPTED", timeout=180_000)

    deadline = time.monotonic() + 120  # the worker sends the score after the verdict's commit
    while not lms.scores_for(link) and time.monotonic() < deadline:
        time.sleep(0.5)
    [score] = lms.scores_for(link)
    assert score["userId"] == "sub-student"
    assert score["scoreGiven"] == score["scoreMaximum"] == LinkedItem.objects.get().item.points
    assert score["activityProgress"] == "Completed" and score["gradingProgress"] == "FullyGraded"

    course = Course.objects.get()
    teacher.goto(f"{live_server.url}/lti/courses/{course.pk}/")
    expect(teacher.locator('tr[data-state="sent"]')).to_contain_text("Sam Student")

    # Someone who never opened GraphDojo comes in by the roster (Names and Role Provisioning).
    lms.add_person("ta", "Tao Assistant", [f"{LIS[:-1]}/Instructor#TeachingAssistant"])
    teacher.get_by_role("button", name="Sync the roster from the LMS").click()
    members = teacher.locator("#roster-members")  # the page refreshes itself until the worker is done
    expect(members.locator('tr[data-role="assistant"]')).to_contain_text("Tao Assistant", timeout=60_000)
    expect(members.locator('tr[data-role="instructor"]')).to_contain_text("Pat Teacher")
    expect(members.locator('tr[data-role="student"]')).to_contain_text("Sam Student")
    expect(teacher.locator("#roster")).to_contain_text("3 members brought in")
    student.context.close()
    teacher.context.close()


def test_an_lms_registers_graphdojo_in_its_frame_and_its_instructor_launches(
    live_server, chromium, content_dir, django_user_model
):
    keys_rotate()
    admin = django_user_model.objects.create_superuser("root", password="a-long-password-1")
    host = urlparse(live_server.url).hostname or "localhost"
    lms = Lms(live_server.url, host=host, issuer_is_url=True).start()
    lms.add_person("teacher", "Pat Teacher", INSTRUCTOR)
    try:
        ours = signed_in(chromium.new_context(locale="en-US"), live_server, admin).new_page()
        ours.goto(f"{live_server.url}/lti/registrations/")
        ours.get_by_label("Which LMS (a name for you)").fill("Campus LMS")
        ours.get_by_role("button", name="Make a registration link").click()
        link = ours.locator("#registration-link code").inner_text().strip()

        # The LMS's administrator pastes the link; the LMS opens it in a frame of its own page.
        theirs = new_page(chromium)
        theirs.goto(f"{lms.url}/admin/register-tool?url={link}")
        expect(theirs.get_by_role("heading", name="Tool registered")).to_be_visible()
        assert lms.close_messages == [{"subject": "org.imsglobal.lti.close"}]
        registration = LtiRegistration.objects.get()
        assert (registration.issuer, registration.client_id) == (lms.url, lms.client_id)

        ours.goto(f"{live_server.url}/lti/registrations/")
        expect(ours.get_by_role("row").filter(has_text=lms.url)).to_contain_text(f"{lms.deployment_id} active")

        teacher = new_page(chromium)
        teacher.goto(lms.start_url("teacher"))
        expect(teacher.get_by_role("heading", name="Add GraphDojo items to your LMS")).to_be_visible()
    finally:
        lms.stop()


HEADINGS = {
    "picker": {"en": "Add GraphDojo items to your LMS", "zh": "把 GraphDojo 的内容添加到 LMS"},
    "grades": {"en": "Grades sent to the LMS", "zh": "发往 LMS 的成绩"},
    "refused": {"en": "This launch from your LMS was refused", "zh": "来自 LMS 的这次启动被拒绝了"},
    "not-ready": {"en": "This course is not set up yet", "zh": "这门课程还没有设置好"},
    "registrations": {"en": "LMS registrations", "zh": "LMS 注册"},
    "registered": {"en": "GraphDojo is registered with your LMS", "zh": "GraphDojo 已注册到你的 LMS"},
    "registration-refused": {"en": "GraphDojo was not registered with your LMS", "zh": "GraphDojo 没有注册到你的 LMS"},
}


def test_the_lti_pages_fit_a_phone_in_both_languages(live_server, chromium, content_dir, lms, django_user_model):
    report = content_sync(content_dir)
    assert not report.errors, report.errors
    teacher = new_page(chromium)
    teacher.goto(lms.start_url("teacher"))
    teacher.get_by_label(TITLE).check()
    teacher.get_by_role("button", name="Add to the LMS").click()
    expect(teacher.get_by_role("heading", name="Placed in the LMS")).to_be_visible()
    [link] = lms.links.values()
    teacher.goto(lms.start_url("teacher", link.id))  # the link's first launch binds it to its item
    expect(teacher.get_by_role("heading", name=TITLE)).to_be_visible()
    teacher.context.close()
    _grades_to_show(lms)
    lms.add_person("ta", "Tao Assistant", [f"{LIS[:-1]}/Instructor#TeachingAssistant"])
    roster_sync(LinkedCourse.objects.get().pk)
    course = Course.objects.get()
    admin = django_user_model.objects.create_superuser("root", password="a-long-password-1")
    registering = Lms(live_server.url, host=urlparse(live_server.url).hostname or "localhost",
                      issuer_is_url=True).start()

    shots = os.environ.get("GRAPHDOJO_SCREENSHOTS")
    for language, locale in LANGUAGES.items():
        pages = {name: new_page(chromium, locale) for name in HEADINGS}
        signed_in(pages["registrations"].context, live_server, admin)
        pages["registrations"].goto(f"{live_server.url}/lti/registrations/")
        pages["registrations"].locator("#registration-name").fill("Campus LMS")
        pages["registrations"].locator("form button[type=submit]").last.click()
        expect(pages["registrations"].locator("#registration-link")).to_be_visible()
        registering.client_id = f"graphdojo-{language}"  # one registration per language
        _link, token = registration_link_create(by=admin, name=f"Campus LMS ({language})")
        pages["registered"].goto(registering.registration_start_url(f"{live_server.url}/lti/register/{token}/"))
        pages["registration-refused"].goto(f"{live_server.url}/lti/register/a-link-nobody-made/")
        pages["picker"].goto(lms.start_url("teacher"))
        pages["grades"].goto(lms.start_url("teacher"))
        pages["grades"].goto(f"{live_server.url}/lti/courses/{course.pk}/")
        lms.launches_expire_in = -120
        pages["refused"].goto(lms.start_url("teacher"))
        lms.launches_expire_in = 300
        lms.context_id = "a-course-nobody-opened"
        pages["not-ready"].goto(lms.start_url("student"))
        lms.context_id = Lms.context_id
        for name, page in pages.items():
            expect(page.get_by_role("heading", name=HEADINGS[name][language])).to_be_visible()
            for width_name, width in WIDTHS.items():
                page.set_viewport_size({"width": width, "height": 900})
                if shots:
                    Path(shots).mkdir(parents=True, exist_ok=True)
                    page.screenshot(path=f"{shots}/{name}-{width_name}-{language}.png", full_page=True)
                overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
                assert overflow <= 1, f"{name} at {width}px in {language} is {overflow}px too wide"
            page.context.close()
    registering.stop()


def _grades_to_show(lms: Lms) -> None:
    """One score the LMS took and one it refused, as the worker leaves them."""
    link = LinkedItem.objects.get()
    course = link.item.assignment.course
    for sub, name, state, reason in [
        ("sub-ada", "Ada Lovelace", GradeSync.State.SENT, ""),
        ("sub-bob", "Bob Example", GradeSync.State.FAILED,
         f"HTTP response [{lms.url}/lineitems/li-2/scores]: 503 - the gradebook is being upgraded"),
    ]:
        registration = link.resource_link.context.deployment.registration
        user = account_link(registration=registration, sub=sub, claims={"name": name}, role="student")
        membership_set(course=course, user=user, role="student")
        GradeSync.objects.create(link=link, user=user, state=state, reason=reason, score_given=7.5,
                                 score_maximum=10, tries=1 if state == GradeSync.State.SENT else 9)
