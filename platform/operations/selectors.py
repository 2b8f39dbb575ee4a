"""What operators read: queues, workers, throughput, latency and failures of grading."""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from celery import current_app as app
from django.conf import settings
from django.utils import timezone

from grading.dispatch import CPU_QUEUE, GPU_QUEUE
from grading.models import Submission
from grading.selectors import grading_workers_online


@dataclass
class GradingSnapshot:
    queue_lengths: dict[str, int | None]
    workers: dict[str, list[str]] | None  # queue -> worker names; None: the broker cannot say
    by_status: dict[str, int]
    stuck: int  # RUNNING longer than the stale time: the sweep reclaims them
    gradings_per_minute: float  # over the last 10 minutes
    p50_s: float | None  # submit -> verdict, over the last hour
    p95_s: float | None
    finished_last_hour: int
    failures_by_cause: dict[str, int] = field(default_factory=dict)  # the last 24 hours
    sandbox_backend: str = ""
    pool_size: int = 0  # warm containers per worker process (each worker process has its own)


def percentile(values: list[float], q: float) -> float | None:
    """The nearest-rank percentile (q in 0..100); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def queue_lengths() -> dict[str, int | None]:
    lengths: dict[str, int | None] = {CPU_QUEUE: None, GPU_QUEUE: None}
    try:
        with app.connection_for_read() as connection:
            channel: Any = connection.default_channel  # a kombu virtual channel
            for queue in lengths:
                if connection.transport.driver_type == "redis":  # an empty queue is no key at all
                    lengths[queue] = channel.client.llen(queue)
                else:
                    lengths[queue] = channel.queue_declare(queue=queue, passive=True).message_count
    except Exception:  # broker down or queue not declared yet: unknown, shown as such
        pass
    return lengths


def grading_snapshot() -> GradingSnapshot:
    now = timezone.now()
    rows = Submission.objects
    online = grading_workers_online()
    workers = None if online is None else {
        queue: sorted(name for name, queues in online.items() if queue in queues) for queue in (CPU_QUEUE, GPU_QUEUE)
    }
    recent = list(rows.filter(finished_at__gte=now - timedelta(hours=1)).values_list("created_at", "finished_at"))
    waits = [(finished - created).total_seconds() for created, finished in recent if finished]
    failed = rows.filter(status=Submission.Status.FAILED, finished_at__gte=now - timedelta(days=1))
    causes = Counter((result or {}).get("cause", "internal error")
                     for result in failed.values_list("result", flat=True))
    return GradingSnapshot(
        queue_lengths=queue_lengths(),
        workers=workers,
        by_status=dict(Counter(rows.filter(status__in=[Submission.Status.QUEUED, Submission.Status.RUNNING,
                                                       Submission.Status.MEASURING])
                               .values_list("status", flat=True))),
        stuck=rows.filter(status=Submission.Status.RUNNING,
                          started_at__lt=now - timedelta(seconds=settings.SUBMISSION_STALE_AFTER_S)).count(),
        gradings_per_minute=rows.filter(finished_at__gte=now - timedelta(minutes=10)).count() / 10,
        p50_s=percentile(waits, 50),
        p95_s=percentile(waits, 95),
        finished_last_hour=len(waits),
        failures_by_cause=dict(causes),
        sandbox_backend=settings.SANDBOX_BACKEND,
        pool_size=settings.SANDBOX_POOL_SIZE,
    )


def prometheus_text(snapshot: GradingSnapshot) -> str:
    """The snapshot in Prometheus' text exposition format."""
    lines: list[str] = []

    def metric(name: str, kind: str, help_text: str, samples: list[tuple[str, float | None]]) -> None:
        lines.extend([f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"])
        lines.extend(f"{name}{labels} {value}" for labels, value in samples if value is not None)

    metric("graphdojo_queue_length", "gauge", "Grading messages waiting in the broker.",
           [(f'{{queue="{q}"}}', n) for q, n in snapshot.queue_lengths.items()])
    if snapshot.workers is not None:
        metric("graphdojo_workers_online", "gauge", "Grading workers consuming each queue.",
               [(f'{{queue="{q}"}}', len(names)) for q, names in snapshot.workers.items()])
    metric("graphdojo_submissions", "gauge", "Submissions waiting or being graded.",
           [(f'{{status="{s}"}}', snapshot.by_status.get(s, 0)) for s in ("queued", "running", "measuring")])
    metric("graphdojo_submissions_stuck", "gauge", "RUNNING longer than the stale time.", [("", snapshot.stuck)])
    metric("graphdojo_gradings_per_minute", "gauge", "Verdicts stored a minute, last 10 minutes.",
           [("", snapshot.gradings_per_minute)])
    metric("graphdojo_submit_to_verdict_seconds", "gauge", "Submit-to-verdict time over the last hour.",
           [('{quantile="0.5"}', snapshot.p50_s), ('{quantile="0.95"}', snapshot.p95_s)])
    metric("graphdojo_failures", "gauge", "FAILED submissions in the last 24 hours, by cause.",
           [(f'{{cause="{c}"}}', n) for c, n in snapshot.failures_by_cause.items()])
    return "\n".join(lines) + "\n"
