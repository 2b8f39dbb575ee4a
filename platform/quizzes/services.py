"""Quiz content sync, attempts (start, save an answer, finish, expire) and spaced repetition."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import secrets
from collections.abc import Iterable, Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from typing import TypeVar

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import User
from grader import quizzes as qz
from quizzes.models import AnsweredItem, AttemptItem, Bank, Question, QuizAttempt, ReviewState, Topic

# Leitner intervals: days until a question in box n (after a right answer) is due again.
REVIEW_INTERVALS_DAYS = {2: 1, 3: 3, 4: 7, 5: 21}
LEARNT_AFTER_BOX = 5
MAX_QUIZ_QUESTIONS = 30


class AttemptClosed(Exception):
    """The attempt is finished or its time ran out: no answer is accepted any more."""

    def __init__(self, attempt: QuizAttempt):
        super().__init__(f"attempt {attempt.pk} is {attempt.status}")
        self.attempt = attempt


# --- content -----------------------------------------------------------------------------

@dataclasses.dataclass
class QuizSyncReport:
    created: list[str] = dataclasses.field(default_factory=list)
    updated: list[str] = dataclasses.field(default_factory=list)
    unchanged: list[str] = dataclasses.field(default_factory=list)
    retired: list[str] = dataclasses.field(default_factory=list)
    errors: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    content: qz.Content | None = None


def _digest(data: object) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


@transaction.atomic
def quiz_content_sync(content_dir: Path | None = None) -> QuizSyncReport:
    """Mirror exercises/quizzes/ into the database. Idempotent; a broken bank changes nothing
    (its questions stay as they were), a question gone from every bank is retired, not deleted."""
    content = qz.load_content(Path(content_dir or settings.CONTENT_DIR))
    report = QuizSyncReport(content=content)
    report.errors = {label: problems for label, problems in content.problems.items()
                     if problems and label.startswith("quizzes/")}
    for topic in content.topics.values():
        Topic.objects.update_or_create(uid=topic.id, defaults={
            "name_en": topic.name["en"], "name_zh": topic.name["zh-hans"], "study_en": topic.study["en"],
            "study_zh": topic.study["zh-hans"], "links": list(topic.links)})
    seen: set[str] = set()
    for bank in content.banks:
        row, _created = Bank.objects.update_or_create(uid=bank.id, defaults={
            "source": bank.source, "title_en": bank.title["en"], "title_zh": bank.title["zh-hans"],
            "description_en": bank.description["en"], "description_zh": bank.description["zh-hans"],
            "time_limit_s": bank.time_limit_s, "question_uids": [q.id for q in bank.questions], "retired": False})
        for question in bank.questions:
            seen.add(question.id)
            spec = question.to_dict()
            fields = {"bank": row, "type": question.type, "difficulty": question.difficulty, "topic": question.topic,
                      "frameworks": list(question.frameworks), "pitfall": question.pitfall,
                      "has_code": question.has_code, "spec": spec, "digest": _digest(spec), "retired": False}
            existing = Question.objects.filter(uid=question.id).first()
            if existing is None:
                Question.objects.create(uid=question.id, **fields)
                report.created.append(question.id)
            elif existing.digest != fields["digest"] or existing.retired or existing.bank_id != row.id:
                Question.objects.filter(pk=existing.pk).update(**fields)
                report.updated.append(question.id)
            else:
                report.unchanged.append(question.id)
    broken = set(report.errors)
    kept = Bank.objects.filter(source__in=broken)
    seen.update(Question.objects.filter(bank__in=kept).values_list("uid", flat=True))
    for stale in Question.objects.filter(retired=False).exclude(uid__in=seen):
        report.retired.append(stale.uid)
    Question.objects.filter(uid__in=report.retired).update(retired=True)
    Bank.objects.exclude(uid__in=[b.id for b in content.banks]).exclude(source__in=broken).update(retired=True)
    return report


def question_model(question: Question) -> qz.Question:
    return qz.Question.from_dict(question.spec)


# --- attempts ----------------------------------------------------------------------------

def _attempt_create(*, user: User, kind: str, questions: Sequence[Question], time_limit_s: int | None,
                    bank: Bank | None = None, filters: Mapping | None = None) -> QuizAttempt:
    if not questions:
        raise ValidationError(_("No question matches that choice."))
    now = timezone.now()
    attempt = QuizAttempt.objects.create(
        user=user, kind=kind, bank=bank, filters=dict(filters or {}), seed=secrets.randbits(48), started_at=now,
        deadline=now + timedelta(seconds=time_limit_s) if time_limit_s else None,
        max_score=sum(q.spec.get("points", 1) for q in questions))
    AttemptItem.objects.bulk_create(
        AttemptItem(attempt=attempt, position=position, question=question,
                    snapshot=qz.instantiate(question_model(question), attempt.seed))
        for position, question in enumerate(questions, start=1))
    return attempt


@transaction.atomic
def quiz_start_bank(*, user: User, bank: Bank, timed: bool) -> QuizAttempt:
    """Every question of a bank, in file order; timed with the bank's limit when asked."""
    by_uid = {q.uid: q for q in Question.objects.filter(bank=bank, retired=False)}
    questions = [by_uid[uid] for uid in bank.question_uids if uid in by_uid]
    limit = bank.time_limit_s or 60 * len(questions)
    return _attempt_create(user=user, kind=QuizAttempt.Kind.BANK, questions=questions, bank=bank,
                           time_limit_s=limit if timed else None)


@transaction.atomic
def quiz_start_custom(*, user: User, topic: str = "", difficulty: str = "", count: int = 10,
                      time_limit_s: int | None = None) -> QuizAttempt:
    """A quiz drawn at random from the questions of a topic and difficulty (either may be blank)."""
    if not 1 <= count <= MAX_QUIZ_QUESTIONS:
        raise ValidationError(_("Choose between 1 and %(n)d questions."), params={"n": MAX_QUIZ_QUESTIONS})
    pool = Question.objects.filter(retired=False)
    if topic:
        pool = pool.filter(topic=topic)
    if difficulty:
        pool = pool.filter(difficulty=difficulty)
    uids = sorted(pool.values_list("uid", flat=True))
    chosen = secrets.SystemRandom().sample(uids, min(count, len(uids)))
    by_uid = Question.objects.in_bulk(chosen, field_name="uid")
    return _attempt_create(user=user, kind=QuizAttempt.Kind.CUSTOM, questions=[by_uid[u] for u in chosen],
                           time_limit_s=time_limit_s, filters={"topic": topic, "difficulty": difficulty})


@transaction.atomic
def quiz_start_review(*, user: User, count: int = 10) -> QuizAttempt:
    """The questions this student missed that are due again, most overdue first."""
    due = (ReviewState.objects.filter(user=user, due_at__lte=timezone.now(), question__retired=False)
           .select_related("question").order_by("due_at", "id")[:count])
    questions = [state.question for state in due]
    if not questions:
        raise ValidationError(_("Nothing is due for review. Missed questions come back here."))
    return _attempt_create(user=user, kind=QuizAttempt.Kind.REVIEW, questions=questions, time_limit_s=None)


def _lock_own_attempt(user: User, attempt_id: int) -> QuizAttempt:
    """The attempt, locked (DoesNotExist for someone else's), closed first if its time ran out."""
    attempt = QuizAttempt.objects.select_for_update().get(pk=attempt_id, user=user)
    if attempt.is_open and attempt.deadline and timezone.now() > attempt.deadline:
        _close(attempt, QuizAttempt.Status.EXPIRED)
    return attempt


Item = TypeVar("Item", bound=AnsweredItem)


def answer_record(item: Item, fields: Mapping[str, Sequence[str]]) -> Item:
    """Mark an answered item (a quiz's or an interview's): parse the form against the
    question it showed, judge it, save. A form that does not fit raises ValidationError."""
    try:
        response = qz.parse_response(item.snapshot, fields)
    except qz.ResponseError as error:
        raise ValidationError(str(error)) from None
    item.response = response
    item.correct = qz.is_correct(item.snapshot, response)
    item.answered_at = timezone.now()
    item.save(update_fields=["response", "correct", "answered_at"])
    return item


def quiz_answer_save(*, user: User, attempt_id: int, position: int, fields: Mapping[str, Sequence[str]]) -> AttemptItem:
    """Save one answer as the student goes. Refused (AttemptClosed) after the deadline, which
    also closes the attempt; a form that does not fit the question raises ValidationError."""
    with transaction.atomic():
        attempt = _lock_own_attempt(user, attempt_id)
        if attempt.is_open:
            return answer_record(attempt.items.get(position=position), fields)
    raise AttemptClosed(attempt)  # outside the transaction, so the closing is kept


@transaction.atomic
def quiz_finish(*, user: User, attempt_id: int) -> QuizAttempt:
    """Hand the attempt in: score it and schedule the missed questions for review."""
    attempt = _lock_own_attempt(user, attempt_id)
    if attempt.is_open:
        _close(attempt, QuizAttempt.Status.FINISHED)
    return attempt


@transaction.atomic
def quiz_expire_if_due(attempt: QuizAttempt) -> QuizAttempt:
    """Close an open attempt whose deadline has passed (pages call this before showing it)."""
    if attempt.is_open and attempt.deadline and timezone.now() > attempt.deadline:
        locked = QuizAttempt.objects.select_for_update().get(pk=attempt.pk)
        if locked.is_open:
            _close(locked, QuizAttempt.Status.EXPIRED)
        return locked
    return attempt


def _close(attempt: QuizAttempt, status: str) -> None:
    items = list(attempt.items.select_related("question"))
    attempt.status = status
    attempt.finished_at = timezone.now()
    attempt.score = float(sum(item.snapshot.get("points", 1) for item in items if item.correct))
    attempt.save(update_fields=["status", "finished_at", "score"])
    review_record(user=attempt.user, results=[(item.question, bool(item.correct)) for item in items])


def review_record(*, user: User, results: Iterable[tuple[Question, bool]]) -> None:
    """Spaced repetition: a miss is due again now (box 1); a right answer to a question under
    review moves it up a box, due later; after the last box it is learnt and leaves the queue."""
    now = timezone.now()
    for question, correct in results:
        state = ReviewState.objects.filter(user=user, question=question).first()
        if not correct:
            if state is None:
                state = ReviewState(user=user, question=question)
            state.box, state.due_at, state.misses = 1, now, state.misses + 1
            state.save()
        elif state is not None and state.due_at is not None:
            state.box += 1
            days = REVIEW_INTERVALS_DAYS.get(state.box)
            state.due_at = None if state.box > LEARNT_AFTER_BOX or days is None else now + timedelta(days=days)
            state.save()
