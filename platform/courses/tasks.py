from celery import shared_task


@shared_task(acks_late=True)
def regrade_job_run(job_id: int) -> None:
    from courses.services import regrade_job_execute  # tasks import services, not the reverse

    regrade_job_execute(job_id)
