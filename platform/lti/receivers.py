"""Counted work sends its score to the LMS: the pending rows commit with the work, the LMS is
called from a worker after the commit (never inside the transaction that stores a verdict)."""

from functools import partial

from django.db import transaction
from django.db.models import Q
from django.db.models.signals import post_save
from django.dispatch import receiver

from grading.models import Submission
from grading.signals import submission_graded
from interviews.models import InterviewAttempt
from lti.services import exercise_items, grade_syncs_queue, interview_items, quiz_items
from lti.tasks import send_grade
from quizzes.models import QuizAttempt

CLOSED = ("finished", "expired")  # as courses.receivers counts an attempt


def _send_after_commit(*, user_id: int, items: Q) -> None:
    for sync_id in grade_syncs_queue(user_id=user_id, items=items):
        transaction.on_commit(partial(send_grade.delay, sync_id))


@receiver(submission_graded, sender=Submission, dispatch_uid="lti.send_exercise_grades")
def _on_graded(sender: type[Submission], submission: Submission, **kwargs: object) -> None:
    if submission.status == Submission.Status.GRADED:  # a platform failure is no grading of the student
        _send_after_commit(user_id=submission.user_id, items=exercise_items(submission))


@receiver(post_save, sender=QuizAttempt, dispatch_uid="lti.send_quiz_grades")
def _on_quiz_saved(sender: type[QuizAttempt], instance: QuizAttempt, update_fields: frozenset[str] | None = None,
                   **kwargs: object) -> None:
    if instance.status in CLOSED and update_fields and "status" in update_fields and instance.bank_id:
        _send_after_commit(user_id=instance.user_id, items=quiz_items(instance))


@receiver(post_save, sender=InterviewAttempt, dispatch_uid="lti.send_interview_grades")
def _on_interview_saved(sender: type[InterviewAttempt], instance: InterviewAttempt,
                        update_fields: frozenset[str] | None = None, **kwargs: object) -> None:
    if instance.status in CLOSED and update_fields and "status" in update_fields:
        _send_after_commit(user_id=instance.user_id, items=interview_items(instance))
