from celery import current_app as app
from django.core.cache import cache
from django.db.models import QuerySet

from accounts.models import User
from catalog.models import Exercise
from grading.dispatch import queue_for
from grading.models import Submission


def submissions_of(user: User, exercise: Exercise) -> QuerySet[Submission]:
    return Submission.objects.filter(user=user, exercise_version__exercise=exercise).select_related(
        "exercise_version"
    )


def grading_workers_online() -> dict[str, list[str]] | None:
    """Workers that answered a ping just now, with the queues they consume (cached 15 s).

    None when the broker cannot broadcast (the embedded filesystem broker): unknown, not zero.
    """
    if not app.conf.broker_url.startswith(("redis", "amqp")):
        return None
    try:  # the cache lives in the broker's Redis: both down, say nothing rather than "no worker"
        cached = cache.get("grading-workers-online")
        if cached is not None:
            return cached["workers"]
        replies = app.control.inspect(timeout=1.0).active_queues() or {}
        workers = {name: sorted(q["name"] for q in queues) for name, queues in replies.items()}
        cache.set("grading-workers-online", {"workers": workers}, 15)
    except Exception:  # noqa: BLE001 - whatever the broker or its cache raise
        return None
    return workers


def waiting_for_a_missing_worker(submission: Submission) -> bool:
    """A queued submission whose queue (gpu or cpu) no online worker consumes."""
    if submission.status != Submission.Status.QUEUED:
        return False
    workers = grading_workers_online()
    return workers is not None and not any(queue_for(submission) in queues for queues in workers.values())
