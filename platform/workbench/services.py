from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from accounts.models import User
from catalog.models import Exercise
from grading.services import submission_code_check
from workbench.models import Draft, HintReveal, PracticeRun
from workbench.selectors import version_hints
from workbench.tasks import run_visible_checks


class PracticeRateLimited(ValidationError):
    """Too many practice runs in the last minute."""


def _check_size(code: str) -> None:
    size = len(code.encode("utf-8"))
    if size > settings.SUBMISSION_MAX_BYTES:
        raise ValidationError(
            _("Your code is %(size)s bytes; the limit is %(limit)s bytes.")
            % {"size": size, "limit": settings.SUBMISSION_MAX_BYTES}
        )


def draft_save(*, user: User, exercise: Exercise, code: str) -> Draft:
    """Keep the student's editor content for this exercise (one draft each, last write wins)."""
    _check_size(code)
    draft, _created = Draft.objects.update_or_create(user=user, exercise=exercise, defaults={"code": code})
    return draft


def practice_run_start(*, user: User, exercise: Exercise, code: str) -> PracticeRun:
    """Queue a run of the visible checks on ``code``; refused past the per-user rate limit."""
    submission_code_check(code)  # the same rules as a submission
    limit = settings.PRACTICE_RUNS_PER_MINUTE
    recent = PracticeRun.objects.filter(user=user, created_at__gte=timezone.now() - timedelta(minutes=1)).count()
    if recent >= limit:
        raise PracticeRateLimited(
            ngettext(
                "You can run the visible checks %(n)s time a minute; wait a moment and try again.",
                "You can run the visible checks %(n)s times a minute; wait a moment and try again.",
                limit,
            )
            % {"n": limit}
        )
    version = exercise.current_version
    assert version is not None, f"{exercise} has no version to practise on: offer only published exercises"
    run = PracticeRun.objects.create(user=user, exercise_version=version, code=code)
    transaction.on_commit(lambda: run_visible_checks.delay(run.id))
    return run


def hint_reveal(*, user: User, exercise: Exercise, number: int) -> HintReveal:
    """Open hint ``number`` (1 for the first) for ``user``: hints open in order, one at a
    time, and opening one again (a form sent twice) changes nothing."""
    version = exercise.current_version
    total = len(version_hints(version)) if version else 0
    if version is None or not 1 <= number <= total:
        raise ValidationError(_("This exercise has no hint %(n)s.") % {"n": number})
    with transaction.atomic():
        opened = HintReveal.objects.select_for_update().filter(user=user, exercise=exercise)
        already = opened.filter(number=number).first()
        if already:
            return already
        if number > opened.count() + 1:
            raise ValidationError(_("Hints open one at a time: open hint %(n)s first.") % {"n": opened.count() + 1})
        return HintReveal.objects.create(user=user, exercise=exercise, number=number, exercise_version=version)
