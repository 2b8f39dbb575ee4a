"""Reads for the interview pages: the item on screen, scorecards and history."""
from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.utils.translation import gettext as _

from accounts.models import User
from catalog.languages import localized
from grading.dispatch import SUBMISSION_JOB
from interviews.models import InterviewAttempt, InterviewItem, InterviewTemplate
from quizzes.selectors import item_feedback, question_view, topics_by_uid

CODING = "coding"
STRONG_PERCENT = 80  # below this, the scorecard points the student to what to study


def templates_published() -> QuerySet[InterviewTemplate]:
    return InterviewTemplate.objects.filter(retired=False)


def attempts_of(user: User) -> QuerySet[InterviewAttempt]:
    return InterviewAttempt.objects.filter(user=user).select_related("template")


def current_step(attempt: InterviewAttempt) -> dict[str, Any]:
    """The one item an open attempt shows, with where it stands in its section."""
    item = attempt.items.select_related("exercise__current_version").get(position=attempt.current)
    in_section = list(attempt.items.filter(section=attempt.section).values_list("position", flat=True))
    step = {
        "item": item,
        "number": in_section.index(item.position) + 1,
        "of": len(in_section),
        "total": attempt.items.count(),
        "can_go_back": bool(attempt.current_section.get("allow_back")) and item.position != in_section[0],
        "is_last": not attempt.items.filter(position__gt=item.position).exists(),
    }
    if item.kind == InterviewItem.Kind.QUESTION:
        step["question"] = question_view(item.snapshot, item.response)
    elif item.kind == InterviewItem.Kind.OPEN:
        step["prompt"] = {"text": localized(item.snapshot["text"]), "follow_up": item.snapshot["kind"] == "follow-up",
                          "answer": (item.response or {}).get("text", "")}
    return step


def open_review(item: InterviewItem) -> dict[str, Any]:
    """An open item on the scorecard: the answer, the model answer, the rubric with what was ticked."""
    response = item.response or {}
    ticked = set(response.get("rubric", ()))
    return {
        "position": item.position, "follow_up": item.snapshot["kind"] == "follow-up",
        "text": localized(item.snapshot["text"]), "answer": response.get("text", ""),
        "model_answer": localized(item.snapshot["model_answer"]),
        "rubric": [{"id": c["id"], "points": c["points"], "text": localized(c["text"]), "ticked": c["id"] in ticked}
                   for c in item.snapshot["rubric"]],
        "points": _points(item), "max_points": item.max_points,
        "samples": _samples(item.snapshot),
    }


def _samples(snapshot: dict[str, Any]) -> list[dict[str, Any]]:
    """The prompt's scored sample answers, each with its score and the rubric lines it meets (none in
    snapshots taken before prompts had samples)."""
    lines = {c["id"]: c for c in snapshot["rubric"]}
    return [{"text": localized(sample["text"]),
             "points": sum(lines[c]["points"] for c in sample["covers"] if c in lines),
             "meets": [localized(lines[c]["text"]) for c in sample["covers"] if c in lines]}
            for sample in snapshot.get("samples", ())]


def _points(item: InterviewItem) -> float:
    if item.kind == InterviewItem.Kind.CODING:
        submission = item.submission
        if submission is None or submission.score is None:
            return 0.0
        return round(submission.score * item.max_points, 2)
    if item.kind == InterviewItem.Kind.OPEN:
        ticked = set((item.response or {}).get("rubric", ()))
        return float(sum(c["points"] for c in item.snapshot["rubric"] if c["id"] in ticked))
    return item.max_points if item.correct else 0.0


def _pending(item: InterviewItem) -> bool:
    coding = item.kind == InterviewItem.Kind.CODING and item.submission is not None
    return coding and not SUBMISSION_JOB.progress_of(item.submission).finished


def topic_percentages(attempt: InterviewAttempt) -> dict[str, tuple[float, float]]:
    """(points, max points) by topic; the coding exercise counts under "coding"."""
    totals: dict[str, list[float]] = {}
    for item in attempt.items.select_related("submission"):
        topic = CODING if item.kind == InterviewItem.Kind.CODING else item.snapshot["topic"]
        row = totals.setdefault(topic, [0.0, 0.0])
        row[0] += _points(item)
        row[1] += item.max_points
    return {topic: (got, most) for topic, (got, most) in totals.items()}


def _percent(got: float, most: float) -> int:
    return round(100 * got / most) if most else 0


def scorecard(attempt: InterviewAttempt) -> dict[str, Any]:
    """Score by topic, compared with the student's earlier attempts at the same template,
    what to study where it is weak, the coding exercise's live status, and every answer."""
    assert not attempt.is_open, "a scorecard of an open interview would reveal its answers"
    topics = topics_by_uid()
    now = topic_percentages(attempt)
    earlier = list(
        InterviewAttempt.objects.filter(user=attempt.user, template=attempt.template, started_at__lt=attempt.started_at)
        .exclude(status=InterviewAttempt.Status.OPEN).order_by("-started_at")[:5])
    history = [topic_percentages(a) for a in earlier]
    rows: list[dict[str, Any]] = []
    for uid, (got, most) in sorted(now.items(), key=lambda kv: (kv[0] == CODING, kv[0])):
        percent = _percent(got, most)
        before = [_percent(*h[uid]) for h in history if uid in h]
        topic = topics.get(uid)
        rows.append({
            "uid": uid,
            "name": topic.name if topic else _("Coding exercise"),
            "points": got, "max_points": most, "percent": percent,
            "previous": before[0] if before else None,
            "delta": percent - before[0] if before else None,
            "study": topic if topic and percent < STRONG_PERCENT else None,
        })
    items = list(attempt.items.select_related("submission", "exercise__current_version", "question"))
    answers = []
    for item in items:
        if item.kind == InterviewItem.Kind.QUESTION:
            answers.append({"kind": "question", "position": item.position,
                            "feedback": item_feedback(item.snapshot, item.response, item.correct)})
        elif item.kind == InterviewItem.Kind.OPEN:
            answers.append({"kind": "open", "position": item.position, "open": open_review(item)})
        else:
            answers.append({"kind": "coding", "position": item.position, "item": item,
                            "title": _exercise_title(item)})
    got = sum(r["points"] for r in rows)
    most = sum(r["max_points"] for r in rows)
    return {
        "rows": rows,
        "total": got, "max_total": most, "percent": _percent(got, most),
        "pending": any(_pending(i) for i in items),
        "answers": answers,
        "earlier_count": len(earlier),
    }


def _exercise_title(item: InterviewItem) -> str:
    version = item.exercise.current_version if item.exercise else None
    return version.title if version else ""


def attempt_summary(attempt: InterviewAttempt) -> dict[str, Any]:
    """One line of the history: the score so far (the coding part may still be grading)."""
    percentages = topic_percentages(attempt)
    got = sum(p[0] for p in percentages.values())
    most = sum(p[1] for p in percentages.values())
    return {"attempt": attempt, "title": attempt.template.title, "points": got, "max_points": most,
            "percent": _percent(got, most) if not attempt.is_open else None}


def section_titles(attempt: InterviewAttempt) -> list[str]:
    return [localized(s["title"]) for s in attempt.spec["sections"]]
