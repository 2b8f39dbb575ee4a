"""Template helpers for verdicts, difficulties and durations in the reader's language."""

from typing import Any

from django import template

from workbench import messages
from workbench.verdicts import VerdictView, verdict_view

register = template.Library()


@register.simple_tag
def verdict_of(submission: Any) -> VerdictView | None:
    """The readable view of a finished submission's stored verdict."""
    if not submission.result:
        return None
    return verdict_view(submission.result, submission.exercise_version.check_titles)


@register.simple_tag
def practice_view(run: Any) -> VerdictView | None:
    """The readable view of a finished practice run (visible checks only)."""
    if not run.result:
        return None
    return verdict_view(run.result, run.exercise_version.check_titles)


@register.filter
def verdict_name(kind: str) -> str:
    return str(messages.VERDICT_NAMES.get(kind, kind))


@register.filter
def difficulty_name(difficulty: str) -> str:
    return str(messages.DIFFICULTIES.get(difficulty, difficulty))


@register.filter
def duration(seconds: Any) -> str:
    """900 -> "15 minutes"."""
    try:
        return messages.duration(float(seconds))
    except (TypeError, ValueError):
        return ""


@register.filter
def points(value: Any) -> str:
    """2.0 -> "2", 1.5 -> "1.5"."""
    try:
        return f"{float(value):g}"
    except (TypeError, ValueError):
        return ""
