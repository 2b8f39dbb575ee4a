"""Mock interviews: template sync, start, one step at a time under two clocks, scoring."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import secrets
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import User
from catalog.selectors import exercises_published
from grader import quizzes as qz
from grading.services import submission_create
from interviews.models import InterviewAttempt, InterviewItem, InterviewTemplate
from quizzes.models import Question
from quizzes.services import answer_record, question_model, review_record

OPEN_ANSWER_MAX_CHARS = 8000


class InterviewClosed(Exception):
    """The interview is over (handed in, or its time ran out): nothing more is accepted."""

    def __init__(self, attempt: InterviewAttempt):
        super().__init__(f"interview {attempt.pk} is {attempt.status}")
        self.attempt = attempt


class NotCurrent(Exception):
    """The form answers an item that is not the one on screen (already passed, or ahead)."""


@dataclasses.dataclass
class TemplateSyncReport:
    synced: list[str] = dataclasses.field(default_factory=list)
    retired: list[str] = dataclasses.field(default_factory=list)
    errors: dict[str, list[str]] = dataclasses.field(default_factory=dict)


@transaction.atomic
def interview_templates_sync(content_dir: Path | None = None, content: qz.Content | None = None) -> TemplateSyncReport:
    """Mirror exercises/interviews/ into the database (after the quiz banks). Idempotent."""
    content = content or qz.load_content(Path(content_dir or settings.CONTENT_DIR))
    report = TemplateSyncReport()
    report.errors = {label: problems for label, problems in content.problems.items()
                     if problems and label.startswith("interviews/")}
    for template in content.templates:
        spec = template.to_dict()
        InterviewTemplate.objects.update_or_create(uid=template.id, defaults={
            "source": template.source, "title_en": template.title["en"], "title_zh": template.title["zh-hans"],
            "description_en": template.description["en"], "description_zh": template.description["zh-hans"],
            "duration_s": template.duration_s, "spec": spec, "retired": False,
            "digest": hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()})
        report.synced.append(template.id)
    stale = (InterviewTemplate.objects.filter(retired=False).exclude(uid__in=report.synced)
             .exclude(source__in=list(report.errors)))
    report.retired = list(stale.values_list("uid", flat=True))
    stale.update(retired=True)
    return report


@transaction.atomic
def interview_start(*, user: User, template: InterviewTemplate) -> InterviewAttempt:
    """Plan the whole interview from a fresh seed and start the first section's clock."""
    questions = {q.uid: q for q in Question.objects.filter(retired=False)}
    seed = secrets.randbits(48)
    plan = qz.plan_interview(qz.InterviewTemplate.from_dict(template.spec),
                             {uid: question_model(q) for uid, q in questions.items()}, seed)
    exercises = {e.slug: e for e in exercises_published()}
    missing = sorted({step.ref for step in plan if step.kind == "coding" and step.ref not in exercises})
    if missing:
        raise ValidationError(_("This interview needs the exercise %(slug)s, which is not available."),
                              params={"slug": ", ".join(missing)})
    if not plan:
        raise ValidationError(_("This interview has no questions left."))
    now = timezone.now()
    deadline = now + timedelta(seconds=template.duration_s)
    first = template.sections[plan[0].section]
    attempt = InterviewAttempt.objects.create(
        user=user, template=template, spec=template.spec, seed=seed, started_at=now, deadline=deadline,
        current=1, section=plan[0].section,
        section_deadline=min(deadline, now + timedelta(seconds=first["time_limit_s"])))
    items = []
    spec = qz.InterviewTemplate.from_dict(template.spec)
    for position, step in enumerate(plan, start=1):
        if step.kind == "open":
            prompt = qz.prompt_for(spec.sections[step.section], step.ref)
            snapshot = {**dataclasses.asdict(prompt), "ref": step.ref, "follow_ups": []}
            items.append(InterviewItem(attempt=attempt, position=position, section=step.section, kind="open",
                                       snapshot=snapshot, max_points=prompt.max_points))
        elif step.kind == "coding":
            points = template.sections[step.section]["points"]
            items.append(InterviewItem(attempt=attempt, position=position, section=step.section, kind="coding",
                                       exercise=exercises[step.ref], max_points=points))
        else:
            question = questions[step.ref]
            snapshot = qz.instantiate(question_model(question), seed)
            items.append(InterviewItem(attempt=attempt, position=position, section=step.section, kind="question",
                                       question=question, snapshot=snapshot, max_points=snapshot["points"]))
    InterviewItem.objects.bulk_create(items)
    return attempt


def _lock(user: User, attempt_id: int) -> InterviewAttempt:
    """The attempt, locked and brought up to date with both clocks (DoesNotExist for others')."""
    attempt = InterviewAttempt.objects.select_for_update().get(pk=attempt_id, user=user)
    _catch_up(attempt)
    return attempt


def _catch_up(attempt: InterviewAttempt) -> None:
    if not attempt.is_open:
        return
    now = timezone.now()
    if now > attempt.deadline:
        _close(attempt, InterviewAttempt.Status.EXPIRED)
    elif now > attempt.section_deadline:
        # The section's time is up: its unanswered items stay unanswered; the next section starts now.
        later = attempt.items.filter(section__gt=attempt.section).order_by("position").first()
        if later is None:
            _close(attempt, InterviewAttempt.Status.FINISHED)
        else:
            _enter(attempt, later, now)
            attempt.save(update_fields=["current", "section", "section_deadline"])


def _enter(attempt: InterviewAttempt, item: InterviewItem, now: datetime) -> None:
    if item.section != attempt.section:
        limit = attempt.spec["sections"][item.section]["time_limit_s"]
        attempt.section = item.section
        attempt.section_deadline = min(attempt.deadline, now + timedelta(seconds=limit))
    attempt.current = item.position


def _advance(attempt: InterviewAttempt) -> None:
    following = attempt.items.filter(position__gt=attempt.current).order_by("position").first()
    if following is None:
        _close(attempt, InterviewAttempt.Status.FINISHED)
        return
    _enter(attempt, following, timezone.now())
    attempt.save(update_fields=["current", "section", "section_deadline"])


def _close(attempt: InterviewAttempt, status: str) -> None:
    attempt.status = status
    attempt.finished_at = timezone.now()
    attempt.save(update_fields=["status", "finished_at"])
    asked = attempt.items.filter(kind="question").select_related("question")
    review_record(user=attempt.user, results=[(item.question, bool(item.correct)) for item in asked if item.question])


@transaction.atomic
def interview_refresh(*, user: User, attempt_id: int) -> InterviewAttempt:
    """Apply the clocks before showing the attempt: skip an expired section, close a late interview."""
    return _lock(user, attempt_id)


def _current_item(attempt: InterviewAttempt, position: int, kind: str) -> InterviewItem:
    if position != attempt.current:
        raise NotCurrent(f"item {position} is not open; item {attempt.current} is")
    item = attempt.items.get(position=position)
    if item.kind != kind:
        raise NotCurrent(f"item {position} is a {item.kind}")
    return item


def interview_answer(
    *, user: User, attempt_id: int, position: int, fields: Mapping[str, Sequence[str]]
) -> InterviewItem:
    """Answer the question on screen (a blank form skips it) and move on."""
    with transaction.atomic():
        attempt = _lock(user, attempt_id)
        if attempt.is_open:
            item = answer_record(_current_item(attempt, position, "question"), fields)
            _advance(attempt)
            return item
    raise InterviewClosed(attempt)  # outside the transaction: the closing stays


def interview_answer_open(*, user: User, attempt_id: int, position: int, text: str) -> InterviewItem:
    """Keep the written answer to the open item on screen (blank skips it) and move on; it is
    scored by the candidate against the rubric once the interview is over."""
    if len(text) > OPEN_ANSWER_MAX_CHARS:
        raise ValidationError(_("Your answer is longer than %(n)s characters."), params={"n": OPEN_ANSWER_MAX_CHARS})
    with transaction.atomic():
        attempt = _lock(user, attempt_id)
        if attempt.is_open:
            item = _current_item(attempt, position, "open")
            if text.strip():
                item.response = {"text": text.strip(), "rubric": []}
                item.answered_at = timezone.now()
                item.save(update_fields=["response", "answered_at"])
            _advance(attempt)
            return item
    raise InterviewClosed(attempt)


@transaction.atomic
def interview_self_score(*, user: User, attempt_id: int, position: int, ticked: Sequence[str]) -> InterviewItem:
    """Record which rubric lines the candidate's own answer covered (after the interview, as often as they like)."""
    attempt = _lock(user, attempt_id)
    if attempt.is_open:
        raise ValidationError(_("Score your answers once the interview is over."))
    item = attempt.items.get(position=position, kind="open")
    if not item.response:
        raise ValidationError(_("There is no answer to score: this question was skipped."))
    known = [c["id"] for c in item.snapshot["rubric"]]
    item.response = {**item.response, "rubric": [c for c in known if c in set(ticked)]}
    item.save(update_fields=["response"])
    return item


def interview_submit_code(
    *, user: User, attempt_id: int, position: int, code: str, skip: bool = False
) -> InterviewItem:
    """Send the coding exercise to the normal grading pipeline (or skip it) and move on."""
    with transaction.atomic():
        attempt = _lock(user, attempt_id)
        if attempt.is_open:
            item = _current_item(attempt, position, "coding")
            if not skip:
                assert item.exercise is not None, "a coding item is planned with its exercise"
                item.submission = submission_create(user=user, exercise=item.exercise, code=code)
                item.answered_at = timezone.now()
                item.save(update_fields=["submission", "answered_at"])
            _advance(attempt)
            return item
    raise InterviewClosed(attempt)


@transaction.atomic
def interview_back(*, user: User, attempt_id: int) -> InterviewAttempt:
    """Go back one item, only where the section allows it and never into a closed section."""
    attempt = _lock(user, attempt_id)
    if not attempt.is_open:
        raise InterviewClosed(attempt)
    if not attempt.current_section.get("allow_back"):
        raise ValidationError(_("This section does not let you go back."))
    previous = attempt.items.filter(position__lt=attempt.current).order_by("-position").first()
    if previous is None or previous.section != attempt.section:
        raise ValidationError(_("This is the first question of the section."))
    attempt.current = previous.position
    attempt.save(update_fields=["current"])
    return attempt


@transaction.atomic
def interview_finish(*, user: User, attempt_id: int) -> InterviewAttempt:
    """End the interview now; what was not answered scores nothing."""
    attempt = _lock(user, attempt_id)
    if attempt.is_open:
        _close(attempt, InterviewAttempt.Status.FINISHED)
    return attempt
