"""Deep linking (the picker's signed response, read back by lti1p3platform), roster sync over
Names and Role Provisioning, and key rotation with the JWKS serving the current and previous keys."""

import re

import pytest
from django.core.management import call_command
from django.test import Client
from lti_tool.models import Key

from courses.models import AssignmentItem, Course, Membership
from lessons.models import Lesson
from lessons.services import lessons_sync
from lti.models import LinkedAccount, LinkedCourse
from lti.services import roster_sync
from tests.platform import classroom as make
from tests.platform.lti.conftest import launch
from tests.platform.lti.lms import DEEP_LINK, LIS

pytestmark = pytest.mark.django_db


def test_the_picker_places_an_exercise_and_the_lms_accepts_the_signed_response(lms):
    make.exercise("graph-ex")
    teacher = Client()
    picker = launch(teacher, lms, "teacher", DEEP_LINK)["Location"]
    page = teacher.get(picker).content.decode()
    assert "Exercise graph-ex" in page

    response = teacher.post(picker, {"choice": ["exercise:graph-ex"]})

    assert response.status_code == 200
    assert f'action="{lms.url}/deep-link-return"' in response.content.decode()
    jwt = response.context["returning"].jwt
    [content_item] = lms.config().validate_deeplinking_resp({"JWT": jwt})  # lti1p3platform checks our signature
    item = AssignmentItem.objects.get()
    assert item.assignment.course == Course.objects.get()
    assert item.exercise_version.exercise.slug == "graph-ex"
    assert content_item["type"] == "ltiResourceLink"
    assert content_item["custom"] == {"graphdojo_item": str(item.pk)}
    assert content_item["lineItem"]["scoreMaximum"] == item.points


def test_only_the_courses_instructor_opens_the_picker(lms):
    launch(Client(), lms, "teacher", DEEP_LINK)
    student = Client()
    launch(student, lms, "student", DEEP_LINK)
    assert student.get(f"/lti/courses/{Course.objects.get().pk}/pick/").status_code == 404


def test_the_roster_sync_brings_in_the_lms_members_with_their_roles(lms):
    lms.add_person("ta", "Tao Assistant", [f"{LIS[:-1]}/Instructor#TeachingAssistant"])
    launch(Client(), lms, "teacher", DEEP_LINK)
    course = Course.objects.get()

    link = roster_sync(LinkedCourse.objects.get().pk)

    assert link.roster_error == "" and link.roster_members == 3
    roles = {m.user.lti_accounts.get().sub: m.role for m in Membership.objects.filter(course=course)}
    assert roles == {"sub-teacher": "instructor", "sub-student": "student", "sub-ta": "assistant"}
    # The student's later launch finds the account the roster made.
    launch(Client(), lms, "student", DEEP_LINK)
    assert LinkedAccount.objects.filter(sub="sub-student").count() == 1


def test_the_roster_button_is_the_instructors(lms):
    teacher = Client()
    launch(teacher, lms, "teacher", DEEP_LINK)
    student = Client()
    launch(student, lms, "student", DEEP_LINK)
    course = Course.objects.get()
    assert student.post(f"/lti/courses/{course.pk}/roster/").status_code == 404


def test_the_instructor_asks_for_a_sync_sees_it_running_then_sees_the_members(
    lms, django_capture_on_commit_callbacks
):
    lms.add_person("ta", "Tao Assistant", [f"{LIS[:-1]}/Instructor#TeachingAssistant"])
    teacher = Client()
    launch(teacher, lms, "teacher", DEEP_LINK)
    course = Course.objects.get()
    page_url = f"/lti/courses/{course.pk}/"

    with django_capture_on_commit_callbacks(execute=False) as queued:
        assert teacher.post(f"/lti/courses/{course.pk}/roster/")["Location"] == page_url
    assert len(queued) == 1  # one sync per LMS link, sent once the request commits
    waiting = teacher.get(page_url).content.decode()
    assert 'hx-trigger="every 2s"' in waiting and "syncing with the LMS" in waiting

    roster_sync(LinkedCourse.objects.get().pk)  # what the worker does with the task

    synced = teacher.get(page_url).content.decode()
    assert "hx-trigger" not in synced and "3 members brought in" in synced
    rows = re.findall(r'<tr data-role="(\w+)"><td>([^<]+)</td>', synced)
    assert rows == [("assistant", "Tao Assistant"), ("instructor", "Pat Teacher"), ("student", "Sam Student")]


def test_a_roster_sync_that_fails_stops_the_page_polling_and_says_why(lms):
    teacher = Client()
    launch(teacher, lms, "teacher", DEEP_LINK)
    course = Course.objects.get()
    link = LinkedCourse.objects.get()
    link.context.memberships_url = f"{lms.url}/no-roster-here"
    link.context.save()
    teacher.post(f"/lti/courses/{course.pk}/roster/")

    roster_sync(link.pk)

    page = teacher.get(f"/lti/courses/{course.pk}/").content.decode()
    assert "hx-trigger" not in page and "no-roster-here" in page


def test_rotation_keeps_the_previous_key_in_the_jwks_and_signs_with_the_new_one(lms):
    call_command("lti_keys")
    call_command("lti_keys")
    newest, previous, *older = Key.objects.order_by("-datetime_created", "-id")

    served = {key["kid"] for key in Client().get("/lti/jwks/").json()["keys"]}

    assert served == {str(newest), str(previous)}
    assert older and not any(key.is_active for key in older)
    # Launches keep working, and what the tool signs now verifies against the new key.
    lms.tool_keyset = {"keys": [newest.as_jwk()]}
    make.exercise("graph-ex")
    teacher = Client()
    picker = launch(teacher, lms, "teacher", DEEP_LINK)["Location"]
    jwt = teacher.post(picker, {"choice": ["exercise:graph-ex"]}).context["returning"].jwt
    assert lms.config().validate_deeplinking_resp({"JWT": jwt})


def test_a_lesson_is_placed_as_an_ungraded_link_and_opens_the_lesson(lms, content_dir):
    lessons_sync(content_dir)
    lesson = Lesson.objects.exclude(current_version=None).order_by("order").first()
    teacher = Client()
    picker = launch(teacher, lms, "teacher", DEEP_LINK)["Location"]

    jwt = teacher.post(picker, {"choice": [f"lesson:{lesson.slug}"]}).context["returning"].jwt
    [content_item] = lms.config().validate_deeplinking_resp({"JWT": jwt})

    assert content_item["custom"] == {"graphdojo_lesson": lesson.slug}
    assert "lineItem" not in content_item
    assert not AssignmentItem.objects.exists()
    link = lms.place(content_item)
    response = launch(Client(), lms, "student", link.id)
    assert response["Location"] == f"/lessons/{lesson.slug}/"


def test_a_deep_linking_launch_places_items_only_in_its_own_course(lms):
    make.exercise("graph-ex")
    teacher = Client()
    launch(teacher, lms, "teacher", DEEP_LINK)
    teacher_user = LinkedAccount.objects.get(sub="sub-teacher").user
    other = make.course(teacher_user)  # the same instructor teaches another course here

    response = teacher.post(f"/lti/courses/{other.pk}/pick/", {"choice": ["exercise:graph-ex"]})

    assert response.status_code == 400
    assert not AssignmentItem.objects.exists()
