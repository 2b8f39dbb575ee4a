from celery import Task, shared_task
from django.conf import settings

from lti.services import GradeNotSent, grade_sync_give_up, grade_sync_send, roster_sync


@shared_task(bind=True, acks_late=True, max_retries=settings.LTI_GRADE_MAX_RETRIES)
def send_grade(self: Task, sync_id: int) -> None:
    """Send one student's score to the LMS; an LMS that does not take it is asked again, later each time."""
    try:
        grade_sync_send(sync_id)
    except GradeNotSent as error:
        if self.request.retries >= (self.max_retries or 0):
            grade_sync_give_up(sync_id, str(error))
            return
        backoff = settings.LTI_GRADE_RETRY_BACKOFF_S * 2**self.request.retries
        raise self.retry(countdown=min(backoff, settings.LTI_GRADE_RETRY_BACKOFF_MAX_S)) from error


@shared_task(acks_late=True)
def sync_roster(link_id: int) -> None:
    roster_sync(link_id)
