import logging
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from catalog.models import Exercise
from catalog.services import exercise_version_spec
from grader.pipeline import grade
from grader.practice import visible_only
from sandbox import SandboxUnavailable
from submissions.services import grading_sandbox
from workbench.models import Draft, PracticeRun
from workbench.tasks import run_visible_checks

log = logging.getLogger(__name__)


class PracticeRateLimited(ValidationError):
    """Too many practice runs in the last minute."""


def _check_size(code: str) -> None:
    size = len(code.encode("utf-8"))
    if size > settings.SUBMISSION_MAX_BYTES:
        raise ValidationError(
            _("Your code is %(size)s bytes; the limit is %(limit)s bytes.") % {"size": size, "limit": settings.SUBMISSION_MAX_BYTES}
        )


def draft_save(*, user, exercise: Exercise, code: str) -> Draft:
    """Keep the student's editor content for this exercise (one draft each, last write wins)."""
    _check_size(code)
    draft, _created = Draft.objects.update_or_create(user=user, exercise=exercise, defaults={"code": code})
    return draft


def practice_run_start(*, user, exercise: Exercise, code: str) -> PracticeRun:
    """Queue a run of the visible checks on ``code``; refused past the per-user rate limit."""
    _check_size(code)
    if not code.strip():
        raise ValidationError(_("Your code is empty: write some code first."))
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
    run = PracticeRun.objects.create(user=user, exercise_version=exercise.current_version, code=code)
    transaction.on_commit(lambda: run_visible_checks.delay(run.id))
    return run


def practice_run_grade(*, practice_id: int) -> None:
    """Run the visible checks of one practice run and keep the result on the run alone."""
    claimed = PracticeRun.objects.filter(id=practice_id, status=PracticeRun.Status.QUEUED).update(
        status=PracticeRun.Status.RUNNING
    )
    if not claimed:
        return
    run = PracticeRun.objects.select_related("exercise_version").get(id=practice_id)
    try:
        spec = visible_only(exercise_version_spec(run.exercise_version))
        result = grade(spec, run.code, grading_sandbox()).to_dict()
        status = PracticeRun.Status.FAILED if result["verdict"] == "INTERNAL_ERROR" else PracticeRun.Status.DONE
    except SandboxUnavailable:
        PracticeRun.objects.filter(id=practice_id).update(status=PracticeRun.Status.QUEUED)
        raise
    except Exception:  # a bug of ours: say the run failed, never leave it spinning
        log.exception("practice run %s failed", practice_id)
        result, status = None, PracticeRun.Status.FAILED
    PracticeRun.objects.filter(id=practice_id).update(status=status, result=result, finished_at=timezone.now())
