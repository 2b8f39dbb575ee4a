"""Every route that names an object, opened and posted to by someone it does not belong to:
student and student, student and instructor, instructor of course A and course B, assistant
and instructor-only routes. Each answer must be 403 or 404, and no row may change."""

import pytest
from django.urls import get_resolver, reverse

from courses.models import Course, ItemScore, Membership, RegradeJob, ScoreOverride
from grading.models import Submission
from leaderboards.models import Entry
from similarity.tasks import fingerprint_submission
from tests.platform import classroom as make

pytestmark = pytest.mark.django_db
APPS = ("courses", "leaderboards", "submissions", "similarity", "lti")
# Routes without an object argument are each user's own (their course list, the join form,
# their account) or public by design (the site-wide board, which shows only pseudonyms).
UNOWNED = {
    "courses:list",
    "courses:create",
    "courses:join",
    "courses:join_code",
    "courses:invitation",  # opened by its emailed token (test_invitations forges and reuses them)
    "leaderboards:index",
    "leaderboards:exercise",
    "leaderboards:your_rank",
    "leaderboards:regrade_stale",
    "submissions:create",
    "submissions:exercise_list",
    "submissions:exercise_detail",
    # An LMS's doors and the tool's keys: verified by the signed launch (tests/platform/lti), not a login.
    "lti:login",
    "lti:launch",
    "lti:jwks",
    "lti:not_ready",
    # Registering an LMS: the site's administrators make a one-time link, which the LMS opens
    # (tests/platform/lti/test_registration.py: non-admins, spent, unknown and expired links).
    "lti:registrations",
    "lti:register",
}
POST_ONLY = {
    "courses:item_move_version",
    "courses:override",
    "courses:regrade",
    "similarity:assignment_hold",
    "similarity:exercise_hold",
    "lti:roster",
}
INSTRUCTOR = {
    "courses:edit", "courses:assignment_create", "courses:item_move_version", "similarity:assignment_hold",
    "lti:pick", "lti:roster",
}
# Site-wide similarity reports: the site's staff only, no instructor of any course.
SITE_STAFF = {"similarity:exercise", "similarity:exercise_pair", "similarity:exercise_hold"}
STAFF = {
    "courses:roster",
    "courses:gradebook",
    "courses:gradebook_csv",
    "courses:student",
    "courses:override",
    "courses:regrade",
    "courses:job",
    "courses:analytics",
    "similarity:assignment",
    "similarity:assignment_pair",
    "lti:course",
}
MEMBER = {
    "courses:detail",
    "courses:assignment",
    "courses:item_work",
    "leaderboards:course",
    "leaderboards:exercise_course",
}
OWNER = {"submissions:detail", "submissions:status"}


@pytest.fixture
def world():
    ex = make.exercise()
    owner, classmate, other_student = make.user("owner"), make.user("classmate"), make.user("other")
    a = make.course(make.user("prof_a", role="instructor"), students=[owner, classmate])
    b = make.course(make.user("prof_b", role="instructor"), students=[other_student])
    assistant = make.user("ta")
    Membership.objects.create(course=a, user=assistant, role=Membership.Role.ASSISTANT)
    assignment, item = make.assignment(a, ex)
    make.version_add(ex)  # so that moving the item to a new version is possible
    submission = make.graded(owner, ex, score=0.5, version=item.exercise_version)
    classmates = make.graded(classmate, ex, score=0.5, version=item.exercise_version)
    for graded in (submission, classmates):
        fingerprint_submission.apply(args=[graded.pk])
    pair = {"a": submission.pk, "b": classmates.pk}
    job = RegradeJob.objects.create(
        course=a, scope="x", submission_ids=[submission.pk], created_by=a.memberships.get(role="instructor").user
    )
    kwargs = {
        "courses:detail": {"pk": a.pk},
        "courses:edit": {"pk": a.pk},
        "courses:roster": {"pk": a.pk},
        "courses:assignment_create": {"pk": a.pk},
        "courses:assignment": {"pk": a.pk, "assignment_pk": assignment.pk},
        "courses:item_work": {"pk": a.pk, "item_pk": item.pk},
        "courses:item_move_version": {"pk": a.pk, "item_pk": item.pk},
        "courses:gradebook": {"pk": a.pk},
        "courses:gradebook_csv": {"pk": a.pk},
        "courses:student": {"pk": a.pk, "user_pk": owner.pk},
        "courses:override": {"pk": a.pk},
        "courses:regrade": {"pk": a.pk},
        "courses:job": {"pk": a.pk, "job_pk": job.pk},
        "courses:analytics": {"pk": a.pk},
        "leaderboards:course": {"pk": a.pk},
        "leaderboards:exercise_course": {"slug": ex.slug, "pk": a.pk},
        "submissions:detail": {"pk": submission.pk},
        "submissions:status": {"pk": submission.pk},
        "similarity:assignment": {"pk": a.pk, "assignment_pk": assignment.pk},
        "similarity:assignment_pair": {"pk": a.pk, "assignment_pk": assignment.pk, **pair},
        "similarity:assignment_hold": {"pk": a.pk, "assignment_pk": assignment.pk},
        "similarity:exercise": {"slug": ex.slug},
        "similarity:exercise_pair": {"slug": ex.slug, **pair},
        "similarity:exercise_hold": {"slug": ex.slug},
        "lti:course": {"pk": a.pk},
        "lti:pick": {"pk": a.pk},
        "lti:roster": {"pk": a.pk},
    }
    post = {
        "item": item.pk,
        "student": owner.pk,
        "points": "0",
        "reason": "x",
        "submission": submission.pk,
        "entry": Entry.objects.get(user=owner).pk,
        "assignment": assignment.pk,
        "title_en": "pwned",
        "title_zh": "pwned",
        "term": "x",
        "who": "other",
        "code": "x",
        "exercise": ex.pk,
    }
    users = {
        "owner": owner,
        "classmate": classmate,
        "other_student": other_student,
        "assistant": assistant,
        "instructor_a": a.memberships.get(role="instructor").user,
        "instructor_b": b.memberships.get(role="instructor").user,
    }
    return kwargs, post, users


def routes() -> set[str]:
    names = set()
    for app in APPS:
        for name in get_resolver().namespace_dict[app][1].reverse_dict:
            if isinstance(name, str):
                names.add(f"{app}:{name}")
    return names


def test_every_route_with_an_object_is_in_this_test(world):
    kwargs, _, _ = world
    assert routes() - UNOWNED == set(kwargs), "a new route must be added to the permission test"


REFUSED = {
    "classmate": STAFF | INSTRUCTOR | OWNER | SITE_STAFF,
    "other_student": STAFF | INSTRUCTOR | MEMBER | OWNER | SITE_STAFF,
    "owner": STAFF | INSTRUCTOR | SITE_STAFF,
    "instructor_b": STAFF | INSTRUCTOR | MEMBER | OWNER | SITE_STAFF,
    "instructor_a": OWNER | SITE_STAFF,  # their students' work is on the course's student page, not here
    "assistant": INSTRUCTOR | OWNER | SITE_STAFF,
}


def snapshot():
    return (
        list(Course.objects.values_list("title_en", "join_code")),
        list(Membership.objects.values_list("user", "role")),
        list(ItemScore.objects.values_list("points", "override_points")),
        ScoreOverride.objects.count(),
        list(Submission.objects.values_list("id", "status", "code")),
        RegradeJob.objects.count(),
        list(Entry.objects.values_list("id", "held_at")),
    )


@pytest.mark.parametrize("intruder", sorted(REFUSED))
def test_each_route_refuses_who_it_does_not_belong_to(client, world, intruder):
    kwargs, post, users = world
    client.force_login(users[intruder])
    before = snapshot()
    for name in sorted(REFUSED[intruder]):
        url = reverse(name, kwargs=kwargs[name])
        got = client.get(url).status_code
        assert got == (405 if name in POST_ONLY else 404) or got == 403, f"GET {name} as {intruder}: {got}"
        got = client.post(url, post).status_code
        assert got in (403, 404), f"POST {name} as {intruder}: {got}"
    assert snapshot() == before


def test_the_owners_see_their_routes(client, world):
    kwargs, _, users = world
    client.force_login(users["instructor_a"])
    for name in STAFF | INSTRUCTOR | MEMBER:
        if name not in POST_ONLY:
            assert client.get(reverse(name, kwargs=kwargs[name])).status_code == 200, name
    client.force_login(users["owner"])
    for name in MEMBER | OWNER:
        assert client.get(reverse(name, kwargs=kwargs[name])).status_code == 200, name
