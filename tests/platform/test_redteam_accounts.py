"""An independent attack on accounts and classrooms, kept as tests that assert the SAFE
outcome: an attack that works is a failing test. The attacker knew README.md and the code,
nothing else, and went through the real site (Django's test client, PostgreSQL, Redis).

Goals tried: enter a course or take a seat one was not invited to, read another student's
work or the real name behind a pseudonym, act as an assistant or instructor without being
made one, take over an account (login brake, password reset, sessions, API tokens, CSRF),
read operator data."""
from __future__ import annotations

import io
import re
import uuid

import pytest
from django.contrib.auth.models import Group, Permission
from django.contrib.auth.tokens import default_token_generator
from django.core import mail
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from rest_framework.authtoken.models import Token

from accounts.models import User
from accounts.services import INSTRUCTORS_GROUP, user_set_role
from courses.models import Invitation, Membership
from courses.services import assistant_add, roster_import
from courses.tokens import invitation_token
from tests.platform import classroom as make

pytestmark = pytest.mark.django_db
PASSWORD = "a-long-password-1"


def fresh_address() -> str:
    """The brake's counts live in Redis for LOGIN_THROTTLE_S: each test brakes its own address."""
    n = uuid.uuid4().int
    return f"10.{n % 250}.{(n >> 8) % 250}.{(n >> 16) % 250 + 1}"


def fresh_name(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:8]}"


def invitation_link(invitation: Invitation) -> str:
    return reverse("courses:invitation", args=[invitation.pk, invitation_token(invitation)])


def reset_link_in(message) -> str:
    return re.search(r"https?://testserver(/accounts/password-reset/\S+/\S+/)", message.body).group(1)


# -- the admin: an instructor is staff, but their rights stop at their own class ---------------


def test_an_instructor_cannot_read_a_stranger_s_code_in_the_admin(client):
    """Instructors are staff with the grading app's rights: the admin must not list the code of
    students outside their courses (the course pages already scope what they see)."""
    ex = make.exercise("redteam-ex")
    teacher = make.user(fresh_name("teacher"), role="instructor")
    user_set_role(teacher, "instructor")  # the group and staff flag, as the site makes instructors
    make.course(teacher)
    stranger = make.user(fresh_name("stranger"), first_name="Grace", last_name="Hopper")
    secret = "# stranger's private solution 7f3a\n"
    submission = make.graded(stranger, ex, code=secret)
    client.force_login(teacher)
    listing = client.get(reverse("admin:grading_submission_changelist"))
    page = client.get(reverse("admin:grading_submission_change", args=[submission.pk]))
    assert listing.status_code in (302, 403, 404) and stranger.username not in listing.content.decode()
    assert page.status_code in (302, 403, 404) and secret not in page.content.decode()


@pytest.mark.parametrize(
    "changelist",
    [
        "admin:quizzes_quizattempt_changelist",
        "admin:quizzes_reviewstate_changelist",
        "admin:interviews_interviewattempt_changelist",
    ],
)
def test_an_instructor_cannot_read_or_edit_students_attempts_in_the_admin(client, changelist):
    """Quiz and interview attempts (every student's answers and scores, site-wide) are no
    content: an instructor's admin rights must not reach them, let alone change them."""
    teacher = make.user(fresh_name("teacher"), role="instructor")
    user_set_role(teacher, "instructor")
    client.force_login(teacher)
    assert client.get(reverse(changelist)).status_code == 403
    assert not any(
        teacher.has_perm(f"{app}.{action}_{model}")
        for app, model in (("quizzes", "quizattempt"), ("quizzes", "attemptitem"), ("interviews", "interviewattempt"))
        for action in ("change", "add", "delete")
    )


def test_a_deployed_instructors_group_loses_the_rights_to_students_work_at_the_next_migrate():
    """Sites set up before the fix hold a group with every right of the grading and quiz apps."""
    teacher = make.user(fresh_name("teacher"), role="instructor")
    user_set_role(teacher, "instructor")
    group = Group.objects.get(name=INSTRUCTORS_GROUP)
    group.permissions.add(*Permission.objects.filter(content_type__app_label__in=["grading", "quizzes"]))
    assert User.objects.get(pk=teacher.pk).has_perm("grading.view_submission")
    call_command("migrate", verbosity=0)
    teacher = User.objects.get(pk=teacher.pk)
    assert not teacher.has_perm("grading.view_submission") and not teacher.has_perm("quizzes.change_quizattempt")
    assert teacher.has_perm("catalog.view_exercise") and teacher.has_perm("quizzes.change_bank")


def test_an_instructor_cannot_open_the_user_list_in_the_admin(client):
    teacher = make.user(fresh_name("teacher"), role="instructor")
    user_set_role(teacher, "instructor")
    client.force_login(teacher)
    assert client.get(reverse("admin:accounts_user_changelist")).status_code == 403
    assert client.get(reverse("admin:authtoken_tokenproxy_changelist")).status_code == 403


def test_a_student_reads_no_operator_data(client):
    student = make.user(fresh_name("student"))
    client.force_login(student)
    assert client.get("/metrics").status_code == 401
    assert client.get(reverse("admin:index")).status_code == 302  # to the login, never the admin
    dashboard = client.get("/operations/")
    assert dashboard.status_code == 302 and "/operations/" not in dashboard.headers.get("Location", "x")[:12]


# -- account takeover ---------------------------------------------------------------------


def test_a_stolen_api_token_dies_when_the_owner_resets_the_password(client):
    """The owner of a taken-over account resets the password by email: the attacker's session
    dies (Django's session hash), and the API token the attacker made must die with it, or the
    attacker keeps reading and submitting as the owner through the API and the CLI."""
    victim = make.user(fresh_name("victim"), email=f"{uuid.uuid4().hex[:8]}@uni.example")
    attacker = Client()
    attacker.force_login(victim)
    attacker.post(reverse("api:token"), {"action": "create"})
    key = Token.objects.get(user=victim).key
    api = Client(headers={"authorization": f"Token {key}"})
    assert api.get(reverse("api:exercise_list")).status_code == 200
    # The owner gets the account back.
    client.post(reverse("accounts:password_reset"), {"email": victim.email})
    link = reset_link_in(mail.outbox[-1])
    form = client.get(link, follow=True)
    new = "another-long-password-2"
    client.post(form.redirect_chain[-1][0], {"new_password1": new, "new_password2": new})
    assert User.objects.get(pk=victim.pk).check_password(new)
    assert attacker.get(reverse("accounts:profile")).status_code == 302  # the stolen session is gone
    assert api.get(reverse("api:exercise_list")).status_code == 401
    told = mail.outbox[-1].body
    assert "API token stopped working" in told and "API 令牌已随旧密码一同失效" in told


def test_a_stolen_api_token_dies_when_the_owner_changes_the_password(client):
    victim = make.user(fresh_name("victim"), email=f"{uuid.uuid4().hex[:8]}@uni.example")
    Token.objects.create(user=victim)
    key = Token.objects.get(user=victim).key
    attacker = Client()
    attacker.force_login(victim)
    client.force_login(victim)
    new = "another-long-password-3"
    client.post(
        reverse("accounts:password_change"),
        {"old_password": PASSWORD, "new_password1": new, "new_password2": new},
    )
    assert User.objects.get(pk=victim.pk).check_password(new)
    assert Client(headers={"authorization": f"Token {key}"}).get(reverse("api:exercise_list")).status_code == 401
    assert attacker.get(reverse("accounts:profile")).status_code == 302  # other sessions end
    assert client.get(reverse("accounts:profile")).status_code == 200  # the one that changed it stays


def test_the_password_change_form_is_no_unbraked_password_oracle(client, settings):
    """Someone holding a session (a shared computer left logged in, a stolen cookie) must not
    guess the password without limit on the change form, which asks for the current one: the
    account's failures are braked there as on the login form."""
    settings.LOGIN_FAILURES_ALLOWED = 3
    settings.LOGIN_ACCOUNT_FAILURES_ALLOWED = 3
    victim = make.user(fresh_name("victim"))
    client.force_login(victim)
    address = fresh_address()
    new = "another-long-password-4"
    for guess in range(3):
        wrong = client.post(
            reverse("accounts:password_change"),
            {"old_password": f"guess-{guess}", "new_password1": new, "new_password2": new},
            REMOTE_ADDR=address,
        )
        assert wrong.status_code in (200, 400)
    right = client.post(
        reverse("accounts:password_change"),
        {"old_password": PASSWORD, "new_password1": new, "new_password2": new},
        REMOTE_ADDR=address,
    )
    assert right.status_code == 429
    assert User.objects.get(pk=victim.pk).check_password(PASSWORD)
    # ... and the login form knows of those failures too (one brake, whichever form was guessed on).
    login = Client().post(reverse("login"), {"username": victim.username, "password": PASSWORD}, REMOTE_ADDR=address)
    assert login.status_code == 429


def test_a_braked_form_does_not_tell_a_right_guess_from_a_wrong_one(settings):
    """While braked, the answer to the right password must be the answer to a wrong one: a form
    that still checked the guess (to show its errors) would leave the brake an oracle."""
    settings.LOGIN_FAILURES_ALLOWED = 2
    settings.LOGIN_ACCOUNT_FAILURES_ALLOWED = 2
    victim = make.user(fresh_name("victim"))
    address = fresh_address()

    def answer(url: str, data: dict, client: Client) -> tuple[int, str]:
        response = client.post(url, data, REMOTE_ADDR=address)
        return response.status_code, re.sub(r"[A-Za-z0-9]{64}", "", response.content.decode())  # the CSRF tokens differ

    login, stranger = reverse("login"), Client()
    for _ in range(2):
        answer(login, {"username": victim.username, "password": "wrong"}, stranger)
    right = answer(login, {"username": victim.username, "password": PASSWORD}, stranger)
    wrong = answer(login, {"username": victim.username, "password": "wrong-again"}, stranger)
    assert right[0] == 429 and right == wrong
    holder = Client()
    holder.force_login(victim)
    change, new = reverse("accounts:password_change"), "another-long-password-5"
    right = answer(change, {"old_password": PASSWORD, "new_password1": new, "new_password2": new}, holder)
    wrong = answer(change, {"old_password": "wrong", "new_password1": new, "new_password2": new}, holder)
    assert right[0] == 429 and right == wrong and "Too many wrong passwords" in right[1]


def test_a_forged_x_forwarded_for_does_not_walk_around_the_brake(settings):
    """Without the proxy setting, X-Forwarded-For is the client's own text and counts for nothing."""
    settings.BEHIND_TLS_PROXY = False
    settings.LOGIN_FAILURES_ALLOWED = 3
    victim = make.user(fresh_name("victim"))
    address = fresh_address()
    attacker = Client()
    for n in range(3):
        attacker.post(
            reverse("login"),
            {"username": victim.username, "password": "wrong"},
            REMOTE_ADDR=address,
            HTTP_X_FORWARDED_FOR=f"192.0.2.{n + 1}",
        )
    refused = attacker.post(
        reverse("login"),
        {"username": victim.username, "password": PASSWORD},
        REMOTE_ADDR=address,
        HTTP_X_FORWARDED_FOR="192.0.2.200",
    )
    assert refused.status_code == 429 and "_auth_user_id" not in attacker.session


def test_behind_the_proxy_a_client_s_own_forwarded_entry_gives_it_no_new_address(settings):
    settings.BEHIND_TLS_PROXY = True
    settings.LOGIN_FAILURES_ALLOWED = 3
    victim = make.user(fresh_name("victim"))
    real = fresh_address()
    attacker = Client()
    for n in range(3):  # the client writes its own entry; the proxy appends the real address
        attacker.post(
            reverse("login"),
            {"username": victim.username, "password": "wrong"},
            REMOTE_ADDR="10.0.0.1",
            HTTP_X_FORWARDED_FOR=f"198.51.100.{n + 1}, {real}",
        )
    refused = attacker.post(
        reverse("login"),
        {"username": victim.username, "password": PASSWORD},
        REMOTE_ADDR="10.0.0.1",
        HTTP_X_FORWARDED_FOR=f"198.51.100.99, {real}",
    )
    assert refused.status_code == 429


def test_a_password_reset_link_cannot_be_pointed_at_another_host(client):
    victim = make.user(fresh_name("victim"), email=f"{uuid.uuid4().hex[:8]}@uni.example")
    poisoned = client.post(reverse("accounts:password_reset"), {"email": victim.email}, HTTP_HOST="evil.example")
    assert poisoned.status_code == 400
    assert not any("evil.example" in m.body for m in mail.outbox)


def test_an_invitation_token_does_not_reset_a_password_nor_the_reverse(client):
    """Both are Django token generators; their salts must keep one from opening the other."""
    course = make.course()
    invitation = Invitation.objects.create(course=course, email="ada@uni.example")
    victim = make.user(fresh_name("victim"), email="victim@uni.example")
    # An invitation's token offered as the reset token of the user with the same id.
    uid = urlsafe_base64_encode(force_bytes(victim.pk))
    page = client.get(reverse("accounts:password_reset_confirm", args=[uid, invitation_token(invitation)]), follow=True)
    assert "new_password1" not in page.content.decode()
    # A reset token offered as an invitation's token.
    forged = default_token_generator.make_token(victim)
    assert client.get(reverse("courses:invitation", args=[invitation.pk, forged])).status_code == 400


def test_signup_and_login_do_not_send_the_browser_off_site(client):
    signup = client.post(
        reverse("accounts:signup") + "?next=//evil.example/",
        {
            "username": fresh_name("new"),
            "email": f"{uuid.uuid4().hex[:8]}@uni.example",
            "password1": PASSWORD,
            "password2": PASSWORD,
        },
    )
    assert signup.status_code == 302 and "evil.example" not in signup.headers["Location"]
    user = make.user(fresh_name("someone"))
    login = Client().post(
        reverse("login") + "?next=https://evil.example/",
        {"username": user.username, "password": PASSWORD},
        REMOTE_ADDR=fresh_address(),
    )
    assert login.status_code == 302 and "evil.example" not in login.headers["Location"]


def test_state_changing_forms_and_the_api_refuse_a_cross_site_post():
    victim = make.user(fresh_name("victim"))
    other = make.course()
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(victim)
    assert browser.post(reverse("api:token"), {"action": "create"}).status_code == 403
    assert not Token.objects.filter(user=victim).exists()
    assert browser.post(reverse("courses:join"), {"code": other.join_code}).status_code == 403
    assert not Membership.objects.filter(user=victim).exists()
    assert browser.post(reverse("api:submit", args=["static-graph-executor"]), {"code": "x"}).status_code in (403, 404)
    assert browser.post(reverse("accounts:profile"), {"pseudonym": "hijacked"}).status_code == 403
    assert browser.post(reverse("logout")).status_code == 403  # no forced logout either


# -- seats and courses ----------------------------------------------------------------------


def test_one_invitation_s_token_does_not_open_another_s_seat(client):
    course = make.course()
    mine = Invitation.objects.create(course=course, email="me@uni.example")
    theirs = Invitation.objects.create(course=course, email="ada@uni.example")
    attacker = make.user(fresh_name("attacker"))
    client.force_login(attacker)
    token = invitation_token(mine)
    taken = client.post(reverse("courses:invitation", args=[theirs.pk, token]))
    assert taken.status_code == 400
    theirs.refresh_from_db()
    assert theirs.claimed_at is None


def test_a_student_link_stops_working_when_the_seat_becomes_an_assistant_s(client, django_capture_on_commit_callbacks):
    """A student's emailed link must not open an assistant's place once the instructor
    invites that address as an assistant instead."""
    course = make.course()
    with django_capture_on_commit_callbacks(execute=True):
        roster_import(course=course, data=b"ada,ada@uni.example,Ada\n", base_url="http://testserver")
    invitation = Invitation.objects.get(course=course)
    old_link = invitation_link(invitation)
    with django_capture_on_commit_callbacks(execute=True):
        assistant_add(course=course, who="ada@uni.example", base_url="http://testserver")
    holder = make.user(fresh_name("holder"))
    client.force_login(holder)
    assert client.post(old_link).status_code == 400
    assert not Membership.objects.filter(course=course, user=holder).exists()


def test_an_assistant_cannot_act_as_the_instructor(client):
    course = make.course()
    assistant = make.user(fresh_name("ta"))
    Membership.objects.create(course=course, user=assistant, role=Membership.Role.ASSISTANT)
    client.force_login(assistant)
    roster = io_file(b"mallory,mallory@evil.example,Mallory\n")
    assert client.post(reverse("courses:roster", args=[course.pk]), {"roster": roster}).status_code == 404
    assert client.post(reverse("courses:roster", args=[course.pk]), {"who": "friend@evil.example"}).status_code == 404
    assert not Invitation.objects.filter(course=course).exists()
    assert client.post(reverse("courses:edit", args=[course.pk]), {"title_en": "x", "title_zh": "x",
                                                                   "term": "x"}).status_code == 404
    course.refresh_from_db()
    assert course.title_en == "Graphs 101"


def test_an_invitation_cannot_demote_or_replace_the_instructor(client):
    """An instructor who follows a student link to their own course stays the instructor."""
    teacher = make.user(fresh_name("teacher"), role="instructor")
    course = make.course(teacher)
    invitation = Invitation.objects.create(course=course, email="ada@uni.example")
    client.force_login(teacher)
    client.post(invitation_link(invitation))
    assert course.memberships.get(user=teacher).role == Membership.Role.INSTRUCTOR


def test_a_classmate_learns_neither_real_names_nor_site_wide_pseudonyms_from_the_course(client):
    ex = make.exercise("redteam-names")
    ada = make.user(fresh_name("ada"), first_name="Ada", last_name="Lovelace")
    mallory = make.user(fresh_name("mallory"))
    course = make.course(students=[ada, mallory])
    make.assignment(course, ex)
    make.graded(ada, ex)
    client.force_login(mallory)
    pages = [
        client.get(reverse("leaderboards:course", args=[course.pk])),
        client.get(reverse("leaderboards:exercise_course", args=[ex.slug, course.pk])),
        client.get(reverse("courses:detail", args=[course.pk])),
    ]
    for page in pages:
        text = page.content.decode()
        assert page.status_code == 200
        assert "Lovelace" not in text and ada.username not in text and ada.pseudonym not in text
    assert course.memberships.get(user=ada).pseudonym in pages[0].content.decode()


def test_a_student_cannot_take_a_classmate_s_course_name(client):
    ada, mallory = make.user(fresh_name("ada")), make.user(fresh_name("mallory"))
    course = make.course(students=[ada, mallory])
    taken = course.memberships.get(user=ada).pseudonym
    client.force_login(mallory)
    answer = client.post(reverse("courses:detail", args=[course.pk]), {"pseudonym": f"  {taken.upper()} "})
    assert answer.status_code == 400
    assert course.memberships.get(user=mallory).pseudonym != taken


def io_file(data: bytes) -> io.BytesIO:
    upload = io.BytesIO(data)
    upload.name = "roster.csv"
    return upload


def test_an_account_made_early_with_a_student_s_address_is_no_back_door(client, django_capture_on_commit_callbacks):
    """Pre-hijack: the attacker signs up with the invited student's address (addresses are not
    verified) and makes an API token. The student cannot make a new account for the invitation,
    so takes the account back by a password reset: the attacker's session and token end there."""
    course = make.course()
    email = f"{uuid.uuid4().hex[:8]}@uni.example"
    attacker = Client()
    name = fresh_name("squat")
    attacker.post(reverse("accounts:signup"), {"username": name, "email": email, "password1": PASSWORD,
                                               "password2": PASSWORD})
    attacker.post(reverse("api:token"), {"action": "create"})
    key = Token.objects.get(user__username=name).key
    with django_capture_on_commit_callbacks(execute=True):
        roster_import(course=course, data=f"ada,{email},Ada Lovelace\n".encode(), base_url="http://testserver")
    link = invitation_link(Invitation.objects.get(course=course))
    refused = client.post(link, {"username": "ada", "password1": PASSWORD, "password2": PASSWORD})
    assert refused.status_code == 400 and not Membership.objects.filter(course=course, role="student").exists()
    client.post(reverse("accounts:password_reset"), {"email": email})
    form = client.get(reset_link_in(mail.outbox[-1]), follow=True)
    new = "another-long-password-6"
    client.post(form.redirect_chain[-1][0], {"new_password1": new, "new_password2": new})
    assert client.login(username=name, password=new)
    client.post(link)
    assert course.memberships.get(role="student").user.username == name
    assert attacker.get(reverse("accounts:profile")).status_code == 302
    assert Client(headers={"authorization": f"Token {key}"}).get(reverse("api:exercise_list")).status_code == 401


def test_sign_up_and_profile_forms_take_no_role_staff_flag_or_address(client):
    name = fresh_name("climber")
    client.post(
        reverse("accounts:signup"),
        {"username": name, "email": f"{name}@uni.example", "password1": PASSWORD, "password2": PASSWORD,
         "role": "instructor", "is_staff": "on", "is_superuser": "on"},
    )
    user = User.objects.get(username=name)
    assert (user.role, user.is_staff, user.is_superuser) == ("student", False, False)
    client.post(reverse("accounts:profile"), {"pseudonym": fresh_name("p"), "email": "victim@uni.example",
                                              "role": "instructor", "is_staff": "on"})
    user.refresh_from_db()
    assert (user.email, user.role, user.is_staff) == (f"{name}@uni.example", "student", False)
    assert client.get(reverse("courses:create")).status_code == 404


def test_a_password_reset_link_works_once(client):
    victim = make.user(fresh_name("victim"), email=f"{uuid.uuid4().hex[:8]}@uni.example")
    client.post(reverse("accounts:password_reset"), {"email": victim.email})
    link = reset_link_in(mail.outbox[-1])
    form = client.get(link, follow=True)
    new = "another-long-password-7"
    client.post(form.redirect_chain[-1][0], {"new_password1": new, "new_password2": new})
    again = Client().get(link, follow=True)
    assert "new_password1" not in again.content.decode()


def test_an_expired_invitation_link_opens_nothing(client, settings):
    course = make.course()
    invitation = Invitation.objects.create(course=course, email="ada@uni.example")
    settings.INVITATION_VALID_S = -1  # every link is older than its lifetime
    client.force_login(make.user(fresh_name("late")))
    assert client.post(invitation_link(invitation)).status_code == 400
    assert not Membership.objects.filter(course=course, role="student").exists()


def test_an_api_token_reads_only_its_owner_s_submissions():
    ex = make.exercise("redteam-api")
    owner, other = make.user(fresh_name("owner")), make.user(fresh_name("other"))
    theirs = make.graded(owner, ex, code="# owner's code\n")
    token = Token.objects.create(user=other)
    api = Client(headers={"authorization": f"Token {token.key}"})
    answer = api.get(reverse("api:submission_detail", args=[theirs.pk]))
    assert answer.status_code == 404 and "owner's code" not in answer.content.decode()


def test_a_new_account_made_from_an_invitation_gets_a_new_session_key(client):
    course = make.course()
    invitation = Invitation.objects.create(course=course, email=f"{uuid.uuid4().hex[:8]}@uni.example")
    session = client.session
    session["planted"] = True  # a session id the attacker fixed in the victim's browser
    session.save()
    planted = session.session_key
    client.cookies["sessionid"] = planted
    client.post(invitation_link(invitation), {"username": fresh_name("ada"), "password1": PASSWORD,
                                              "password2": PASSWORD})
    assert "_auth_user_id" in client.session and client.session.session_key != planted


def test_a_student_s_chosen_names_run_no_script_on_staff_pages(client):
    """A student's name and course pseudonym are the student's to choose: on every page the
    instructor opens they must come out as text, or the student's script acts as the instructor."""
    payload = '<img src=x onerror="alert(1)">'
    ex = make.exercise("redteam-xss")
    student = make.user(fresh_name("xss"), first_name=payload, last_name=payload)
    teacher = make.user(fresh_name("teacher"), role="instructor")
    course = make.course(teacher, students=[student])
    make.assignment(course, ex)
    make.graded(student, ex)
    client.force_login(student)
    client.post(reverse("courses:detail", args=[course.pk]), {"pseudonym": payload})
    assert course.memberships.get(user=student).pseudonym == payload
    Invitation.objects.create(course=course, email="x@uni.example", name=payload)
    client.force_login(teacher)
    for url in (
        reverse("courses:gradebook", args=[course.pk]),
        reverse("courses:student", args=[course.pk, student.pk]),
        reverse("courses:roster", args=[course.pk]),
        reverse("leaderboards:course", args=[course.pk]),
        reverse("leaderboards:exercise_course", args=[ex.slug, course.pk]),
        reverse("courses:analytics", args=[course.pk]),
    ):
        page = client.get(url)
        assert page.status_code == 200 and payload not in page.content.decode(), url


def test_the_admin_s_own_password_change_form_is_braked_too(client, settings):
    """Instructors are staff, and Django's admin has a password-change form of its own: with an
    instructor's session it must not guess the password without the brake (nor change it
    without ending the account's tokens and telling its address)."""
    settings.LOGIN_FAILURES_ALLOWED = 3
    settings.LOGIN_ACCOUNT_FAILURES_ALLOWED = 3
    teacher = make.user(fresh_name("teacher"), role="instructor")
    user_set_role(teacher, "instructor")
    client.force_login(teacher)
    address = fresh_address()
    url, new = "/admin/password_change/", "another-long-password-8"
    for guess in range(3):
        client.post(url, {"old_password": f"guess-{guess}", "new_password1": new, "new_password2": new},
                    REMOTE_ADDR=address, follow=True)
    client.post(url, {"old_password": PASSWORD, "new_password1": new, "new_password2": new},
                REMOTE_ADDR=address, follow=True)
    assert User.objects.get(pk=teacher.pk).check_password(PASSWORD)


def test_a_password_an_administrator_sets_ends_the_account_s_tokens(admin_client):
    """Support gives a taken-over account back by setting its password in the admin: the taker's
    token must end there too."""
    victim = make.user(fresh_name("victim"), email=f"{uuid.uuid4().hex[:8]}@uni.example")
    key = Token.objects.create(user=victim).key
    new = "another-long-password-9"
    answer = admin_client.post(
        reverse("admin:auth_user_password_change", args=[victim.pk]),
        {"password1": new, "password2": new, "usable_password": "true"},
    )
    assert answer.status_code == 302 and User.objects.get(pk=victim.pk).check_password(new)
    assert Client(headers={"authorization": f"Token {key}"}).get(reverse("api:exercise_list")).status_code == 401


def test_a_session_cookie_replayed_after_logout_is_nobody(client):
    user = make.user(fresh_name("leaver"))
    client.force_login(user)
    cookie = client.cookies["sessionid"].value
    client.post(reverse("logout"))
    replay = Client()
    replay.cookies["sessionid"] = cookie
    assert replay.get(reverse("accounts:profile")).status_code == 302
