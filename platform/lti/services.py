"""LTI 1.3 for the tool side: launches land people in their course with their role, deep links
place items, grades go back (Assignment and Grade Services) and rosters come in (Names and Role
Provisioning). PyLTI1p3 validates every message; django-lti keeps the platform's rows."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import timedelta
from typing import Final

from django.core.cache import cache
from django.db import transaction
from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.text import slugify
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from lti_tool.lti_core.utils import normalize_role
from lti_tool.models import Key, LtiContext, LtiLaunch, LtiRegistration, LtiResourceLink
from lti_tool.utils import DjangoToolConfig, sync_data_from_launch
from pylti1p3.assignments_grades import AssignmentsGradesService
from pylti1p3.contrib.django import DjangoCacheDataStorage, DjangoMessageLaunch, DjangoOIDCLogin
from pylti1p3.deep_link_resource import DeepLinkResource
from pylti1p3.exception import LtiException, OIDCException
from pylti1p3.grade import Grade
from pylti1p3.lineitem import LineItem
from pylti1p3.names_roles import NamesRolesProvisioningService
from pylti1p3.service_connector import ServiceConnector
from requests import RequestException

from accounts.models import User
from catalog.models import Exercise
from courses.models import Assignment, AssignmentItem, Course, ItemScore, Membership
from courses.services import assignment_create, course_create, item_add
from grading.models import Submission
from interviews.models import InterviewAttempt, InterviewTemplate
from lessons.models import Lesson
from lti.models import GradeSync, LinkedAccount, LinkedCourse, LinkedItem
from quizzes.models import Bank, QuizAttempt

LIS = "http://purl.imsglobal.org/vocab/lis/v2/membership#"
TEACHING_ASSISTANT = "http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#TeachingAssistant"
STAFF_ROLES = {LIS + "Instructor", LIS + "Administrator", LIS + "ContentDeveloper"}
SCORE_SCOPE: Final = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
LINEITEM_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"
CUSTOM_ITEM = "graphdojo_item"
CUSTOM_LESSON = "graphdojo_lesson"
SESSION_LAUNCH = "lti_launch_id"
# A nonce is spent by the first launch that carries it: PyLTI1p3 only checks that the tool issued
# it, so a launch posted again (a replay) would pass for as long as the id_token lives.
NONCE_SPENT_S = 24 * 3600


class LaunchRefused(Exception):
    """A launch that proves nothing: the reason in the reader's language, the library's words apart."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.detail = detail


REASONS = {
    "state": gettext_lazy(
        "This browser did not start this launch (its state cookie is missing or different). "
        "Open the link again from your course in the LMS."
    ),
    "replay": gettext_lazy("This launch was already used once. Open the link again from your course in the LMS."),
    "issuer": gettext_lazy("GraphDojo has no registration for the platform that sent this launch (unknown issuer)."),
    "audience": gettext_lazy(
        "This launch was addressed to another tool (its audience is not a client id registered here)."
    ),
    "expired": gettext_lazy("This launch has expired. Open the link again from your course in the LMS."),
    "signature": gettext_lazy("This launch's signature does not verify against the platform's keys."),
    "deployment": gettext_lazy(
        "This placement of GraphDojo in your LMS waits for a site administrator to activate its deployment."
    ),
    "keys": gettext_lazy("GraphDojo has no signing key yet: a site administrator runs `manage.py lti_keys`."),
    "invalid": gettext_lazy("This launch could not be verified."),
}


def _refusal(error: Exception, token_issuer: str | None) -> LaunchRefused:
    """Name what was wrong with a launch PyLTI1p3 refused, from its (English) message."""
    detail = str(error)
    text = detail.lower()
    if "state" in text:
        kind = "state"
    elif "nonce" in text:
        kind = "replay"
    elif "registration" in text or "client id not registered" in text:
        known_issuer = LtiRegistration.objects.active().filter(issuer=token_issuer or "").exists()
        kind = "audience" if known_issuer else "issuer"
    elif "expired" in text:
        kind = "expired"
    elif "signature" in text or "public key" in text or "decode" in text:
        kind = "signature"
    else:
        kind = "invalid"
    return LaunchRefused(str(REASONS[kind]), detail)


# -- login and launch ---------------------------------------------------------------------------


def oidc_login_redirect(request: HttpRequest) -> HttpResponse:
    """The first leg (OIDC third-party login): send the browser back to the platform with a nonce."""
    params = request.POST if request.method == "POST" else request.GET
    target = params.get("target_link_uri")
    if not target:
        raise LaunchRefused(str(REASONS["invalid"]), "missing target_link_uri")
    try:
        login = DjangoOIDCLogin(request, DjangoToolConfig(), launch_data_storage=DjangoCacheDataStorage())
        return login.redirect(target)
    except Key.DoesNotExist as error:
        raise LaunchRefused(str(REASONS["keys"]), str(error)) from error
    except (LtiException, OIDCException) as error:
        raise _refusal(error, params.get("iss")) from error


@dataclass(frozen=True)
class Landing:
    user: User
    url: str
    launch_id: str


def launch_accept(request: HttpRequest) -> Landing:
    """Validate a launch and land its user: every write commits together, or none does."""
    message = DjangoMessageLaunch(request, DjangoToolConfig(), launch_data_storage=DjangoCacheDataStorage())
    try:
        with transaction.atomic():
            message.validate()
            body = message.get_launch_data()
            if not cache.add(f"lti-nonce-spent:{body['nonce']}", True, NONCE_SPENT_S):
                raise LtiException("Nonce already used")
            launch = LtiLaunch(message)
            sync_data_from_launch(launch)
            if not launch.deployment.is_active:
                raise LaunchRefused(str(REASONS["deployment"]), launch.deployment.deployment_id)
            return _land(launch)
    except Key.DoesNotExist as error:
        raise LaunchRefused(str(REASONS["keys"]), str(error)) from error
    except LtiException as error:
        raise _refusal(error, _unverified_issuer(message)) from error


def _unverified_issuer(message: DjangoMessageLaunch) -> str | None:
    # Only to word the refusal: which issuer the token claimed, signed or not.
    body = (getattr(message, "_jwt", None) or {}).get("body") or {}
    return body.get("iss")


def _land(launch: LtiLaunch) -> Landing:
    role = role_of(launch.roles_claim or [])
    user = account_link(registration=launch.registration, sub=launch.get_claim("sub"),
                        claims=launch.get_launch_data(), role=role)
    course = course_of_context(launch.context, user=user, role=role)
    launch_id = launch.get_launch_id()
    if course is None:
        return Landing(user, reverse("lti:not_ready"), launch_id)
    membership_set(course=course, user=user, role=role)
    if launch.is_deep_link_launch:
        return Landing(user, reverse("lti:pick", args=[course.pk]), launch_id)
    lesson = launch.get_custom_claim(CUSTOM_LESSON)
    if lesson:
        return Landing(user, reverse("lessons:detail", args=[lesson]), launch_id)
    link = item_link(launch, course)
    if link is not None:
        return Landing(user, reverse("courses:item_work", args=[course.pk, link.item_id]), launch_id)
    if role == Membership.Role.STUDENT:
        return Landing(user, reverse("courses:detail", args=[course.pk]), launch_id)
    return Landing(user, reverse("lti:course", args=[course.pk]), launch_id)


def role_of(roles: list[str]) -> str:
    """The course role an LMS's roles claim gives: staff roles teach, a TA assists, anyone else learns."""
    normalized = {normalize_role(role) for role in roles}
    if TEACHING_ASSISTANT in normalized:
        return Membership.Role.ASSISTANT
    if normalized & STAFF_ROLES:
        return Membership.Role.INSTRUCTOR
    return Membership.Role.STUDENT


def account_link(*, registration: LtiRegistration, sub: str, claims: dict, role: str) -> User:
    """The account of a platform's user: found by (registration, subject), else made for them
    (never by email, never by issuer alone)."""
    account = LinkedAccount.objects.select_related("user").filter(registration=registration, sub=sub).first()
    if account is None:
        digest = hashlib.sha256(f"{registration.pk}\n{registration.issuer}\n{sub}".encode()).hexdigest()[:8]
        name = slugify(claims.get("name") or claims.get("given_name") or "")[:30] or "lti"
        user = User(
            username=f"{name}-{digest}",  # unique by the digest; the name only helps people read it
            first_name=(claims.get("given_name") or claims.get("name") or "")[:150],
            last_name=(claims.get("family_name") or "")[:150],
            email=claims.get("email") or "",
        )
        user.set_unusable_password()  # they come in through the LMS
        user.save()
        account = LinkedAccount.objects.create(
            registration=registration, issuer=registration.issuer, sub=sub, user=user)
    user = account.user
    if role == Membership.Role.INSTRUCTOR and not user.is_instructor:
        user.role = User.Role.INSTRUCTOR  # they teach in the LMS: they may create the course here
        user.save(update_fields=["role"])
    return user


def course_of_context(context: LtiContext, *, user: User, role: str) -> Course | None:
    """The course a platform's context teaches; its first instructor's launch creates it."""
    link = LinkedCourse.objects.select_related("course").filter(context=context).first()
    if link is not None:
        return link.course
    if role != Membership.Role.INSTRUCTOR:
        return None
    title = context.title or context.label or _("Course from the LMS")
    course = course_create(by=user, title_en=title, title_zh=title, term=context.label[:60] or "LMS")
    LinkedCourse.objects.create(context=context, course=course)
    return course


def membership_set(*, course: Course, user: User, role: str) -> Membership:
    """The LMS says who someone is in its course; the course's creator stays its instructor."""
    membership, created = Membership.objects.get_or_create(course=course, user=user, defaults={"role": role})
    if not created and membership.role != role and user.pk != course.created_by_id:
        membership.role = role
        membership.save(update_fields=["role"])
    return membership


def item_link(launch: LtiLaunch, course: Course) -> LinkedItem | None:
    """The item a placed link opens: bound by the custom parameter our deep link set, its line item kept."""
    resource_link: LtiResourceLink = launch.resource_link
    lineitem_url = (launch.ags_claim or {}).get("lineitem", "")
    link = LinkedItem.objects.filter(resource_link=resource_link).first()
    if link is None:
        item_id = launch.get_custom_claim(CUSTOM_ITEM)
        item = AssignmentItem.objects.filter(pk=item_id, assignment__course=course).first() if item_id else None
        if item is None:
            return None
        return LinkedItem.objects.create(resource_link=resource_link, item=item, lineitem_url=lineitem_url)
    if lineitem_url and link.lineitem_url != lineitem_url:
        link.lineitem_url = lineitem_url
        link.save(update_fields=["lineitem_url"])
    return link


def launch_restore(request: HttpRequest, launch_id: str) -> LtiLaunch:
    message = DjangoMessageLaunch.from_cache(
        launch_id, request, DjangoToolConfig(), launch_data_storage=DjangoCacheDataStorage()
    )
    return LtiLaunch(message)


# -- deep linking -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Choice:
    key: str  # "exercise:<slug>", "quiz:<id>", "interview:<id>", "lesson:<slug>"
    kind: str
    title: str


def picker_choices() -> list[Choice]:
    """What an instructor may place in the LMS: exercises, quizzes, interviews and lessons."""
    exercises = (
        Exercise.objects.exclude(current_version=None).select_related("current_version")
        .order_by("current_version__title_en")
    )
    lessons = Lesson.objects.filter(retired=False).exclude(current_version=None).select_related("current_version")
    return [
        *(Choice(f"exercise:{e.slug}", str(AssignmentItem.Kind.EXERCISE.label), e.current_version.title)
          for e in exercises if e.current_version),
        *(Choice(f"quiz:{b.pk}", str(AssignmentItem.Kind.QUIZ.label), b.title) for b in Bank.objects.all()),
        *(Choice(f"interview:{t.pk}", str(AssignmentItem.Kind.INTERVIEW.label), t.title)
          for t in InterviewTemplate.objects.all()),
        *(Choice(f"lesson:{lesson.slug}", _("Lesson"), lesson.current_version.title)
          for lesson in lessons if lesson.current_version),
    ]


def lms_assignment(course: Course) -> Assignment:
    """The assignment that holds what was placed from the LMS: the LMS keeps the real due dates."""
    title_en, title_zh = "Placed from the LMS", "从 LMS 添加"
    existing = course.assignments.filter(title_en=title_en).first()
    if existing is not None:
        return existing
    now = timezone.now()
    return assignment_create(
        course=course, title_en=title_en, title_zh=title_zh, opens_at=now - timedelta(minutes=1),
        due_at=now + timedelta(days=3650),
    )


@dataclass(frozen=True)
class DeepLinkReturn:
    url: str  # the platform's deep_link_return_url, from the launch it signed
    jwt: str  # our signed LtiDeepLinkingResponse


def deep_link_response(*, launch: LtiLaunch, course: Course, keys: list[str], points: int = 10) -> DeepLinkReturn:
    """Add the chosen things to the course and sign the deep-linking response that lists them."""
    if not launch.is_deep_link_launch:
        raise LaunchRefused(str(REASONS["invalid"]), "not a deep-linking launch")
    if not LinkedCourse.objects.filter(context=launch.context, course=course).exists():
        # The launch came from another LMS course: its items would land in one course, its links in another.
        raise LaunchRefused(str(REASONS["invalid"]), "the deep-linking launch came from another course")
    by_key = {choice.key: choice for choice in picker_choices()}
    resources = []
    with transaction.atomic():
        for key in keys:
            choice = by_key.get(key)
            if choice is None:
                continue
            kind, _sep, ident = key.partition(":")
            resource = DeepLinkResource().set_title(choice.title).set_url(
                launch.get_claim("https://purl.imsglobal.org/spec/lti/claim/target_link_uri")
            )
            if kind == "lesson":
                resources.append(resource.set_custom_params({CUSTOM_LESSON: ident}))
                continue
            item = item_add(assignment=lms_assignment(course), kind=kind, target=_target(kind, ident), points=points)
            lineitem = (
                LineItem().set_label(choice.title).set_score_maximum(points).set_resource_id(f"graphdojo-item-{item.pk}")
            )
            resources.append(resource.set_custom_params({CUSTOM_ITEM: str(item.pk)}).set_lineitem(lineitem))
    settings_claim = launch.get_claim("https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings")
    jwt = launch.get_message_launch().get_deep_link().get_response_jwt(resources)
    return DeepLinkReturn(url=settings_claim["deep_link_return_url"], jwt=jwt)


def _target(kind: str, ident: str) -> Exercise | Bank | InterviewTemplate:
    if kind == AssignmentItem.Kind.EXERCISE:
        return Exercise.objects.get(slug=ident)
    if kind == AssignmentItem.Kind.QUIZ:
        return Bank.objects.get(pk=ident)
    return InterviewTemplate.objects.get(pk=ident)


# -- grades back to the LMS (Assignment and Grade Services) -----------------------------------


def grade_syncs_queue(*, user_id: int, items: Q) -> list[int]:
    """Counted work on ``items``: mark each of their placed links pending for the student (sent after commit)."""
    links = LinkedItem.objects.filter(
        items,
        item__assignment__course__memberships__user_id=user_id,
        item__assignment__course__memberships__role=Membership.Role.STUDENT,
        resource_link__context__deployment__registration__in=LinkedAccount.objects.filter(
            user_id=user_id
        ).values("registration"),
    ).exclude(lineitem_url="")
    ids = []
    for link in links:
        sync, _created = GradeSync.objects.update_or_create(
            link=link, user_id=user_id, defaults={"state": GradeSync.State.PENDING, "reason": ""}
        )
        ids.append(sync.pk)
    return ids


def exercise_items(submission: Submission) -> Q:
    return Q(item__exercise_version_id=submission.exercise_version_id)


def quiz_items(attempt: QuizAttempt) -> Q:
    return Q(item__kind=AssignmentItem.Kind.QUIZ, item__bank_id=attempt.bank_id)


def interview_items(attempt: InterviewAttempt) -> Q:
    return Q(item__kind=AssignmentItem.Kind.INTERVIEW, item__interview_id=attempt.template_id)


class GradeNotSent(Exception):
    """The platform did not take the score (unreachable, refused): worth another try later."""


def grade_sync_send(sync_id: int) -> GradeSync:
    """Send the student's current counted score on the item to the link's line item."""
    sync = GradeSync.objects.select_related(
        "link__item", "link__resource_link__context__deployment__registration"
    ).get(pk=sync_id)
    link = sync.link
    registration = link.resource_link.context.deployment.registration
    account = LinkedAccount.objects.get(registration=registration, user_id=sync.user_id)
    row = ItemScore.objects.filter(item=link.item, user_id=sync.user_id).first()
    given = (row.effective if row is not None else None) or 0.0
    maximum = float(link.item.points)
    grade = (
        Grade()
        .set_score_given(given)
        .set_score_maximum(maximum)
        .set_timestamp(timezone.now().isoformat())
        .set_activity_progress("Completed")
        .set_grading_progress("FullyGraded")
        .set_user_id(account.sub)
    )
    service = AssignmentsGradesService(
        ServiceConnector(registration.to_registration()), {"scope": [SCORE_SCOPE], "lineitem": link.lineitem_url}
    )
    GradeSync.objects.filter(pk=sync.pk).update(tries=sync.tries + 1, score_given=given, score_maximum=maximum)
    try:
        service.put_grade(grade)
    except (LtiException, RequestException) as error:
        GradeSync.objects.filter(pk=sync.pk).update(reason=_error_text(error), updated_at=timezone.now())
        raise GradeNotSent(_error_text(error)) from error
    GradeSync.objects.filter(pk=sync.pk).update(
        state=GradeSync.State.SENT, reason="", sent_at=timezone.now(), updated_at=timezone.now()
    )
    sync.refresh_from_db()
    return sync


def grade_sync_give_up(sync_id: int, reason: str) -> None:
    GradeSync.objects.filter(pk=sync_id).update(state=GradeSync.State.FAILED, reason=reason, updated_at=timezone.now())


def _error_text(error: Exception) -> str:
    return str(error)[:500]  # PyLTI1p3 and requests name the URL, the status and the body


# -- roster (Names and Role Provisioning) -------------------------------------------------------


def roster_sync_request(course: Course) -> list[int]:
    """Mark the course's LMS links as syncing; the caller queues one sync per link."""
    links = LinkedCourse.objects.filter(course=course)
    links.update(roster_requested_at=timezone.now())
    return list(links.values_list("pk", flat=True))


def roster_sync(link_id: int) -> LinkedCourse:
    """Bring the LMS's members into the course: accounts by (issuer, subject), roles from the LMS."""
    link = LinkedCourse.objects.select_related("context__deployment__registration", "course").get(pk=link_id)
    registration = link.context.deployment.registration
    link.roster_requested_at = None
    if not link.context.memberships_url:
        link.roster_error = _("The LMS offers no roster for this course (no Names and Role Provisioning).")
        link.save(update_fields=["roster_error", "roster_requested_at"])
        return link
    service = NamesRolesProvisioningService(
        ServiceConnector(registration.to_registration()),
        {"context_memberships_url": link.context.memberships_url},
    )
    try:
        members = service.get_members()
    except (LtiException, RequestException) as error:
        link.roster_error = _error_text(error)
        link.save(update_fields=["roster_error", "roster_requested_at"])
        return link
    count = 0
    with transaction.atomic():
        for member in members:
            if member.get("status", "Active") != "Active" or not member.get("user_id"):
                continue
            role = role_of(member.get("roles", []))
            user = account_link(registration=registration, sub=member["user_id"], claims=dict(member), role=role)
            membership_set(course=link.course, user=user, role=role)
            count += 1
        link.roster_members, link.roster_error, link.roster_synced_at = count, "", timezone.now()
        link.save(update_fields=["roster_members", "roster_error", "roster_synced_at", "roster_requested_at"])
    return link


def roster_of(link: LinkedCourse) -> list[Membership]:
    """The course's members the LMS knows (linked by its registration), staff first, then by name."""
    registration = link.context.deployment.registration
    return list(
        Membership.objects.filter(course_id=link.course_id, user__lti_accounts__registration=registration)
        .select_related("user")
        .order_by("role", "user__last_name", "user__first_name", "user__username")
    )


# -- keys ---------------------------------------------------------------------------------------


def keys_rotate(keep: int = 2) -> tuple[Key, int]:
    """A new signing key; the JWKS keeps serving the previous one for platforms that cached it."""
    with transaction.atomic():
        key = Key.objects.generate()
        kept = Key.objects.active().order_by("-datetime_created", "-id").values_list("pk", flat=True)[:keep]
        retired = Key.objects.active().exclude(pk__in=list(kept)).update(is_active=False)
    return key, retired
