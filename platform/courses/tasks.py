from celery import shared_task

from courses.jobs import regrade_job_execute


@shared_task(acks_late=True)
def regrade_job_run(job_id: int) -> None:
    regrade_job_execute(job_id)
