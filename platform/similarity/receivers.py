from functools import partial

from django.db import transaction
from django.dispatch import receiver

from grading.models import Submission
from grading.signals import submission_graded
from similarity.tasks import fingerprint_submission


@receiver(submission_graded, sender=Submission, dispatch_uid="similarity.fingerprint")
def _on_graded(sender: type[Submission], submission: Submission, **kwargs: object) -> None:
    # After the commit, on a worker: tokenizing is no reason to hold the verdict's transaction.
    if submission.status == Submission.Status.GRADED:
        transaction.on_commit(partial(fingerprint_submission.delay, submission.id))
