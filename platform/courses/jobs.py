"""Regrade jobs as a worker runs them; tasks.py wraps this, services.py queues it."""

from django.db import transaction
from django.utils import timezone

from courses.models import RegradeJob
from grading.services import submission_requeue


def regrade_job_execute(job_id: int) -> None:
    """Idempotent: a submission graded again since the job began is not requeued twice."""
    job = RegradeJob.objects.get(id=job_id)
    RegradeJob.objects.filter(id=job_id, started_at__isnull=True).update(started_at=timezone.now())
    for submission_id in job.submission_ids:
        with transaction.atomic():
            submission_requeue(submission_id, graded_before=job.created_at)
