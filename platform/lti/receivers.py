from functools import partial

from django.db import transaction
from django.dispatch import receiver

from grading.models import Submission
from grading.signals import submission_graded
from lti.services import grade_syncs_queue
from lti.tasks import send_grade


@receiver(submission_graded, sender=Submission, dispatch_uid="lti.send_grades")
def _on_graded(sender: type[Submission], submission: Submission, **kwargs: object) -> None:
    # Pending rows commit with the verdict; the LMS is called from a worker, after the commit.
    if submission.status == Submission.Status.GRADED:
        for sync_id in grade_syncs_queue(submission):
            transaction.on_commit(partial(send_grade.delay, sync_id))
