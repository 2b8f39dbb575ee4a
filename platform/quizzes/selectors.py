"""Reads for the quiz pages. Nothing here returns an answer key for an attempt still open."""
from __future__ import annotations

import collections
from typing import Any

from django.db.models import Avg, Case, Count, F, FloatField, Q, QuerySet, Value, When
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import User
from catalog.languages import language_key, localized
from grader import quizzes as qz
from quizzes.models import Bank, Question, QuizAttempt, ReviewState, Topic


def banks_published() -> QuerySet[Bank]:
    """Banks easiest first (by their questions' mean difficulty), so a newcomer does not open
    the list on the hardest quiz."""
    live = Q(questions__retired=False)
    weight = Case(
        When(questions__difficulty="easy", then=Value(1.0)),
        When(questions__difficulty="hard", then=Value(3.0)),
        default=Value(2.0),
        output_field=FloatField(),
    )
    return Bank.objects.filter(retired=False).annotate(
        question_count=Count("questions", filter=live), ease=Avg(weight, filter=live)
    ).order_by(F("ease").asc(nulls_last=True), "title_en")


def topics_with_counts() -> list[Topic]:
    counts = dict(Question.objects.filter(retired=False).values_list("topic").annotate(n=Count("id")))
    topics = list(Topic.objects.all())
    for topic in topics:
        topic.question_count = counts.get(topic.uid, 0)
    return topics


def topics_by_uid() -> dict[str, Topic]:
    return {t.uid: t for t in Topic.objects.all()}


def attempts_of(user: User) -> QuerySet[QuizAttempt]:
    return QuizAttempt.objects.filter(user=user).select_related("bank")


def review_due_count(user: User) -> int:
    return ReviewState.objects.filter(user=user, due_at__lte=timezone.now(), question__retired=False).count()


def attempt_title(attempt: QuizAttempt) -> str:
    if attempt.kind == QuizAttempt.Kind.BANK and attempt.bank:
        return attempt.bank.title
    if attempt.kind == QuizAttempt.Kind.REVIEW:
        return _("Review of missed questions")
    topic = Topic.objects.filter(uid=attempt.filters.get("topic")).first()
    return _("Practice: %(topic)s") % {"topic": topic.name if topic else _("all topics")}


def question_view(snapshot: dict[str, Any], response: Any) -> dict[str, Any]:
    """What a template needs to show a question and the student's current answer — never the key."""
    kind = snapshot["type"]
    choices = []
    ranks = {}
    if kind == "ordering" and isinstance(response, list):
        ranks = {choice_id: index for index, choice_id in enumerate(response, start=1)}
    for choice in snapshot["choices"]:
        checked = response == choice["id"] or (isinstance(response, list) and choice["id"] in response)
        choices.append({"id": choice["id"], "text": localized(choice["text"]), "checked": checked,
                        "rank": ranks.get(choice["id"])})
    return {
        "type": kind,
        "widget": "choice" if (kind == "single" or (kind == "code_output" and choices)) else kind,
        "text": localized(snapshot["text"]),
        "code": snapshot["code"],
        "choices": choices,
        "positions": list(range(1, len(choices) + 1)),
        "value": "" if response is None or isinstance(response, (list, bool)) else (
            f"{response:g}" if isinstance(response, float) else str(response)),
        "bool_value": response if isinstance(response, bool) else None,
        "answered": response is not None,
    }


def item_feedback(snapshot: dict[str, Any], response: Any, correct: bool | None) -> dict[str, Any]:
    """A finished item: the question, what the student said, the right answer and why."""
    lang = language_key()
    yes, no = _("True"), _("False")
    key = snapshot["key"]["answer"]
    view = question_view(snapshot, response)
    right_ids = set(key) if isinstance(key, list) else {key}
    for choice in view["choices"]:
        choice["right"] = choice["id"] in right_ids
    return {
        **view,
        "topic": snapshot["topic"],
        "difficulty": snapshot["difficulty"],
        "correct": bool(correct),
        "your_answer": qz.display(snapshot, response, lang, yes=yes, no=no),
        "right_answer": qz.display(snapshot, key, lang, expected=True, yes=yes, no=no),
        "explanation": localized(snapshot["explanation"]),
        "reference": snapshot["reference"],
    }


def attempt_results(attempt: QuizAttempt) -> dict[str, Any]:
    """Score, per-question feedback, the mistakes, and the score by topic of a closed attempt."""
    assert not attempt.is_open, "results of an open attempt would reveal its answers"
    items = list(attempt.items.all())
    feedback = []
    by_topic: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    for item in items:
        entry = item_feedback(item.snapshot, item.response, item.correct)
        entry["position"] = item.position
        feedback.append(entry)
        by_topic[entry["topic"]][0] += 1 if item.correct else 0
        by_topic[entry["topic"]][1] += 1
    topics = topics_by_uid()
    return {
        "items": feedback,
        "mistakes": [entry for entry in feedback if not entry["correct"]],
        "by_topic": [{"topic": topics.get(uid), "uid": uid, "right": right, "total": total}
                     for uid, (right, total) in sorted(by_topic.items())],
    }


def attempt_questions(attempt: QuizAttempt) -> list[dict[str, Any]]:
    """The questions of an open attempt with the answers saved so far."""
    return [{"position": item.position, "question": question_view(item.snapshot, item.response)}
            for item in attempt.items.all()]
