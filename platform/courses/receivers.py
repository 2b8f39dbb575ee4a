"""Keep item scores current in the transaction that stores the work."""

from django.db.models import Sum
from django.db.models.signals import post_save
from django.dispatch import receiver

from courses.models import AssignmentItem
from courses.services import attempt_record, exercise_grading_record
from grading.models import Submission
from grading.signals import submission_graded
from interviews.models import InterviewAttempt
from quizzes.models import QuizAttempt

CLOSED = ("finished", "expired")


@receiver(submission_graded, sender=Submission, dispatch_uid="courses.item_scores")
def _on_graded(sender: type[Submission], submission: Submission, **kwargs: object) -> None:
    if submission.status == Submission.Status.GRADED:  # a platform failure is no grading of the student
        exercise_grading_record(submission)


@receiver(post_save, sender=QuizAttempt, dispatch_uid="courses.quiz_scores")
def _on_quiz_saved(
    sender: type[QuizAttempt], instance: QuizAttempt, update_fields: frozenset[str] | None = None, **kwargs: object
) -> None:
    if (
        instance.status in CLOSED
        and update_fields
        and "status" in update_fields
        and instance.bank_id
        and instance.max_score
    ):
        attempt_record(
            kind=AssignmentItem.Kind.QUIZ,
            field="bank_id",
            target_id=instance.bank_id,
            user_id=instance.user_id,
            share=(instance.score or 0) / instance.max_score,
            received_at=instance.finished_at or instance.started_at,
        )


@receiver(post_save, sender=InterviewAttempt, dispatch_uid="courses.interview_scores")
def _on_interview_saved(
    sender: type[InterviewAttempt],
    instance: InterviewAttempt,
    update_fields: frozenset[str] | None = None,
    **kwargs: object,
) -> None:
    if instance.status in CLOSED and update_fields and "status" in update_fields:
        totals = instance.items.aggregate(total=Sum("max_points"))
        earned = instance.items.filter(correct=True).aggregate(earned=Sum("max_points"))
        share = (earned["earned"] or 0) / totals["total"] if totals["total"] else 0.0
        attempt_record(
            kind=AssignmentItem.Kind.INTERVIEW,
            field="interview_id",
            target_id=instance.template_id,
            user_id=instance.user_id,
            share=share,
            received_at=instance.finished_at or instance.started_at,
        )
