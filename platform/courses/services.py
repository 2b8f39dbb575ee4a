"""Writes for courses: creation, enrolment (code, invitations from a roster file, assistants), assignments,
item scores kept current as work is graded, overrides with their audit, regrade jobs."""

from __future__ import annotations

import csv
import functools
import io
import math
from dataclasses import dataclass
from datetime import datetime

from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.core.validators import validate_email
from django.db import transaction
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from accounts.models import User
from catalog.models import Exercise
from courses.models import (
    Assignment,
    AssignmentItem,
    Course,
    Invitation,
    ItemScore,
    Membership,
    RegradeJob,
    ScoreOverride,
)
from courses.tasks import regrade_job_run
from courses.tokens import invitation_token
from grading.models import Submission
from grading.services import submission_resubmit
from interviews.models import InterviewTemplate
from quizzes.models import Bank

ROSTER_MAX_BYTES = 512 * 1024
ROSTER_MAX_ROWS = 5000


def course_create(*, by: User, title_en: str, title_zh: str, term: str) -> Course:
    if not by.is_instructor:
        raise ValidationError(_("Only instructors create courses."))
    with transaction.atomic():
        course = Course.objects.create(title_en=title_en, title_zh=title_zh, term=term, created_by=by)
        Membership.objects.create(course=course, user=by, role=Membership.Role.INSTRUCTOR)
    return course


def course_join(*, user: User, code: str) -> Course:
    """A student joins with the course's code; joining twice changes nothing."""
    course = Course.objects.filter(join_code=code.strip().upper()).first()
    if course is None:
        raise ValidationError(_("No course has this code. Check it with your instructor."))
    Membership.objects.get_or_create(course=course, user=user, defaults={"role": Membership.Role.STUDENT})
    return course


def membership_pseudonym_set(*, membership: Membership, name: str) -> Membership:
    """A student's name on one course's boards: at least 3 characters, unique in the course."""
    name = name.strip()
    if len(name) < 3:
        raise ValidationError(_("Choose at least 3 characters."))
    taken = Membership.objects.filter(course_id=membership.course_id, pseudonym__iexact=name)
    if taken.exclude(pk=membership.pk).exists():
        raise ValidationError(_("Someone else in this course goes by this name already."))
    membership.pseudonym = name
    membership.save(update_fields=["pseudonym"])
    return membership


def assistant_add(*, course: Course, who: str, base_url: str) -> Invitation:
    """Invite an assistant by email: whoever follows the mailed link becomes one. An account is
    never made an assistant by a name or an address alone (addresses are not verified at sign-up)."""
    email = who.strip().lower()
    try:
        validate_email(email)
    except ValidationError:
        raise ValidationError(_("%(who)s is not an email address.") % {"who": who}) from None
    invitation, created = Invitation.objects.get_or_create(
        course=course, email=email, defaults={"role": Membership.Role.ASSISTANT}
    )
    if not created and invitation.claimed_at is None and invitation.role != Membership.Role.ASSISTANT:
        invitation.role = Membership.Role.ASSISTANT  # changes the token: a student link mailed earlier stops working
        invitation.save(update_fields=["role"])
    elif not created:
        raise ValidationError(_("%(who)s was invited already.") % {"who": email})
    transaction.on_commit(functools.partial(invitation_send, invitation, base_url))
    return invitation


@dataclass
class RosterResult:
    invited: list[str]  # addresses invited now
    already: list[str]  # addresses invited before (not mailed again)


def roster_import(*, course: Course, data: bytes, base_url: str) -> RosterResult:
    """Invite every row of a CSV (username, email, name) by email: each address gets a link that
    enrols whoever follows it (a new account, or one they log in to). No account is enrolled or
    created here, and a row's username is only offered as the new account's name. All rows or none."""
    if len(data) > ROSTER_MAX_BYTES:
        raise ValidationError(_("The roster is larger than %(n)s KB.") % {"n": ROSTER_MAX_BYTES // 1024})
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValidationError(_("The roster is not UTF-8 text; save it as CSV (UTF-8).")) from None
    rows = [row for row in csv.reader(io.StringIO(text)) if any(cell.strip() for cell in row)]
    if rows and [c.strip().lower() for c in rows[0]][:2] == ["username", "email"]:
        rows = rows[1:]
    if not rows:
        raise ValidationError(_("The roster has no rows. Expected: username, email, name."))
    if len(rows) > ROSTER_MAX_ROWS:
        raise ValidationError(_("The roster has more than %(n)s rows.") % {"n": ROSTER_MAX_ROWS})
    parsed: dict[str, tuple[str, str]] = {}
    errors = []
    for number, row in enumerate(rows, start=1):
        cells = [cell.strip() for cell in row]
        if len(cells) < 2 or not cells[0]:
            errors.append(_("row %(n)s: expected username, email, name") % {"n": number})
            continue
        try:
            validate_email(cells[1])
        except ValidationError:
            errors.append(_("row %(n)s: %(email)s is not an email address") % {"n": number, "email": cells[1]})
            continue
        parsed.setdefault(cells[1].lower(), (cells[0][:150], cells[2][:300] if len(cells) > 2 else ""))
    if errors:
        raise ValidationError(errors)
    result = RosterResult(invited=[], already=[])
    with transaction.atomic():
        known = set(course.invitations.filter(email__in=list(parsed)).values_list("email", flat=True))
        for email, (username, name) in parsed.items():
            if email in known:
                result.already.append(email)
                continue
            invitation = Invitation.objects.create(course=course, email=email, username=username, name=name)
            transaction.on_commit(functools.partial(invitation_send, invitation, base_url))
            result.invited.append(email)
    return result


def invitation_link(invitation: Invitation, base_url: str) -> str:
    return base_url + reverse("courses:invitation", args=[invitation.pk, invitation_token(invitation)])


def invitation_send(invitation: Invitation, base_url: str) -> None:
    """Mail the invitation's link, in both languages (we do not know the student's yet)."""
    link = invitation_link(invitation, base_url)
    texts = []
    for language, title in (("en", invitation.course.title_en), ("zh-hans", invitation.course.title_zh)):
        with translation.override(language):
            texts.append(
                _(
                    "You are invited to %(course)s on GraphDojo. Open this link to join it, with a new "
                    "account or the one you have: %(link)s"
                )
                % {"course": title, "link": link}
            )
    subject = _("Your GraphDojo course: %(course)s") % {"course": invitation.course.title_en}
    send_mail(subject, "\n\n".join(texts), None, [invitation.email])
    Invitation.objects.filter(pk=invitation.pk).update(sent_at=timezone.now())


def invitation_resend(*, course: Course, invitation_id: int, base_url: str) -> Invitation:
    invitation = Invitation.objects.filter(course=course, pk=invitation_id, claimed_at__isnull=True).first()
    if invitation is None:
        raise ValidationError(_("This invitation was accepted already."))
    invitation_send(invitation, base_url)
    return invitation


def invitation_claim(*, invitation: Invitation, user: User) -> Membership:
    """The link's holder takes the place: enrolled with the invitation's role, the invitation
    closed (its link stops working). A second claim of the same invitation is refused."""
    with transaction.atomic():
        locked = Invitation.objects.select_for_update().get(pk=invitation.pk)
        if locked.claimed_at is not None:
            raise ValidationError(_("This invitation was accepted already."))
        membership, created = Membership.objects.get_or_create(
            course_id=locked.course_id, user=user, defaults={"role": locked.role}
        )
        if not created and membership.role == Membership.Role.STUDENT and locked.role != membership.role:
            membership.role = locked.role
            membership.save(update_fields=["role"])
        locked.claimed_by, locked.claimed_at = user, timezone.now()
        locked.save(update_fields=["claimed_by", "claimed_at"])
    invitation.claimed_by, invitation.claimed_at = locked.claimed_by, locked.claimed_at
    return membership


def invitation_claim_with_new_account(*, invitation: Invitation, username: str, password: str) -> User:
    """A new account for the invited address (the link proved it is theirs), enrolled at once."""
    if User.objects.filter(email__iexact=invitation.email).exists():
        raise ValidationError(_("An account uses this address already: log in to accept the invitation."))
    first, _sep, last = invitation.name.partition(" ")
    with transaction.atomic():
        user = User.objects.create_user(
            username=username,
            email=invitation.email,
            password=password,
            first_name=first[:150],
            last_name=last[:150],
        )
        invitation_claim(invitation=invitation, user=user)
    return user


def assignment_create(*, course: Course, **fields: object) -> Assignment:
    position = (course.assignments.order_by("-position").values_list("position", flat=True).first() or 0) + 1
    assignment = Assignment(course=course, position=position, **fields)
    assignment.full_clean()
    assignment.save()
    return assignment


def item_add(
    *, assignment: Assignment, kind: str, target: Exercise | Bank | InterviewTemplate, points: int
) -> AssignmentItem:
    """Add an exercise (pinned to its current version), a quiz bank or an interview."""
    position = (assignment.items.order_by("-position").values_list("position", flat=True).first() or 0) + 1
    item = AssignmentItem(assignment=assignment, position=position, kind=kind, points=points)
    if kind == AssignmentItem.Kind.EXERCISE and isinstance(target, Exercise):
        item.exercise_version = target.current_version
    elif kind == AssignmentItem.Kind.QUIZ and isinstance(target, Bank):
        item.bank = target
    elif kind == AssignmentItem.Kind.INTERVIEW and isinstance(target, InterviewTemplate):
        item.interview = target
    else:
        raise ValueError(f"a {kind} item cannot point at {type(target).__name__} {target}")
    item.save()
    return item


# -- scores ---------------------------------------------------------------------------


def item_points(item: AssignmentItem, share: float, received_at: datetime) -> tuple[float | None, int, bool]:
    """(points, days late, refused) for work worth ``share`` (0..1) received at a time;
    points is None when the work does not count (before opening, or late and refused)."""
    assignment = item.assignment
    if received_at < assignment.opens_at:
        return None, 0, False
    if received_at <= assignment.due_at:
        return round(share * item.points, 4), 0, False
    days_late = math.ceil((received_at - assignment.due_at).total_seconds() / 86400)
    if assignment.late_policy == Assignment.LatePolicy.REFUSE:
        return None, days_late, True
    kept = max(0.0, 1 - assignment.penalty_per_day / 100 * days_late)
    return round(share * item.points * kept, 4), days_late, False


def item_score_record(
    *,
    item: AssignmentItem,
    user_id: int,
    share: float,
    received_at: datetime,
    submission_id: int | None = None,
    an_attempt: bool = True,
) -> None:
    """Count one graded piece of work; the row keeps the best. Three queries, whatever the history.
    ``an_attempt`` is False for work the platform submitted again (a move to a new version)."""
    points, days_late, refused = item_points(item, share, received_at)
    if points is None and not refused:
        return
    ItemScore.objects.bulk_create([ItemScore(item=item, user_id=user_id)], ignore_conflicts=True)
    row = ItemScore.objects.select_for_update().get(item=item, user_id=user_id)
    regrade_of_counted = submission_id is not None and row.submission_id == submission_id
    if an_attempt and not regrade_of_counted:
        row.attempts += 1
    if refused:
        row.late_refused += 1
    elif points is not None and (regrade_of_counted or row.points is None or points > row.points):
        row.points, row.days_late, row.submission_id = points, days_late, submission_id
    row.save()


def exercise_grading_record(submission: Submission) -> None:
    """A verdict was stored: update the student's score on every item pinned to its version."""
    items = AssignmentItem.objects.filter(
        exercise_version_id=submission.exercise_version_id,
        assignment__course__memberships__user_id=submission.user_id,
        assignment__course__memberships__role=Membership.Role.STUDENT,
    ).select_related("assignment")
    for item in items:
        item_score_record(
            item=item,
            user_id=submission.user_id,
            share=submission.score or 0.0,
            received_at=submission.received_at or submission.created_at,
            submission_id=submission.id,
            an_attempt=submission.received_at is None,
        )


def attempt_record(*, kind: str, field: str, target_id: int, user_id: int, share: float, received_at: datetime) -> None:
    """A quiz or interview attempt closed: count it on every item that names its bank or template."""
    items = AssignmentItem.objects.filter(
        kind=kind,
        **{field: target_id},
        assignment__course__memberships__user_id=user_id,
        assignment__course__memberships__role=Membership.Role.STUDENT,
    ).select_related("assignment")
    for item in items:
        item_score_record(item=item, user_id=user_id, share=share, received_at=received_at)


def score_override(*, item: AssignmentItem, user: User, points: float | None, reason: str, by: User) -> ScoreOverride:
    """Set (or, with None, remove) a manual score; the reason and its author are kept for good."""
    if not reason.strip():
        raise ValidationError(_("Say why the score changes; the reason is kept with it."))
    if points is not None and not 0 <= points <= item.points:
        raise ValidationError(_("The score must be between 0 and %(n)s.") % {"n": item.points})
    with transaction.atomic():
        override = ScoreOverride.objects.create(item=item, user=user, points=points, reason=reason.strip(), by=by)
        ItemScore.objects.update_or_create(item=item, user=user, defaults={"override_points": points})
    return override


# -- regrades ---------------------------------------------------------------------------


def regrade_start(*, course: Course, by: User, scope: str, submission_ids: list[int]) -> RegradeJob:
    """Queue a regrade job; the Celery task requeues each submission once."""
    job = RegradeJob.objects.create(
        course=course, created_by=by, scope=scope, submission_ids=sorted(set(submission_ids))
    )
    transaction.on_commit(lambda: regrade_job_run.delay(job.id))
    return job


def item_move_to_current_version(*, item: AssignmentItem, by: User) -> RegradeJob:
    """Move an exercise item to the exercise's current version, explicitly: every student's
    counted code is submitted again under the new version, and the old scores stop counting."""
    pinned = item.exercise_version
    assert pinned is not None, "only exercise items have a version to move"
    exercise = Exercise.objects.select_related("current_version").get(id=pinned.exercise_id)
    current = exercise.current_version
    if current is None or current.id == pinned.id:
        raise ValidationError(_("This item is on the current version already."))
    with transaction.atomic():
        counted = list(
            ItemScore.objects.filter(item=item, submission__isnull=False).select_related("submission", "user")
        )
        item.exercise_version = current
        item.save(update_fields=["exercise_version"])
        ItemScore.objects.filter(item=item).update(points=None, submission=None, days_late=0)
        new_ids = [
            submission_resubmit(original=row.submission, version=current).id
            for row in counted
            if row.submission is not None
        ]
        return RegradeJob.objects.create(
            course=item.assignment.course,
            created_by=by,
            started_at=timezone.now(),
            scope=_("%(title)s moved to version %(n)s") % {"title": current.title_en, "n": current.number},
            submission_ids=new_ids,
        )
