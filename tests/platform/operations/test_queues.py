"""Queues as students meet them: GPU work waits for a GPU worker (and the page says so), and
one student's burst delays another student by at most one grading."""
from __future__ import annotations

import pytest
from django.core.cache import cache
from django.urls import reverse

from grading.models import Submission
from grading.services import SubmissionRefused
from testbed.processes import wait_for
from tests.platform.operations.conftest import report, slow_solution

pytestmark = [pytest.mark.slow]
NO_GPU = "No GPU grading worker is online right now"


def test_gpu_work_waits_for_a_gpu_worker_and_the_page_says_why(grading_site, student, client):
    import redis

    site = grading_site
    site.worker("cpu-only")
    gpu = site.submit(student, slug="tiny-gpu-answer")
    broker = redis.Redis.from_url(site.redis.url)
    wait_for(lambda: broker.llen("gpu") == 1, 10, "the task on the gpu queue")
    client.force_login(student)
    cache.delete("grading-workers-online")
    page = client.get(reverse("submissions:status", args=[gpu.id])).content.decode()
    assert NO_GPU in page and 'data-status="queued"' in page

    site.worker("gpu", queues="gpu")
    wait_for(lambda: f"submission {gpu.id}: attempt 1" in (site.tmp / "gpu.log").read_text(), 60,
             "the GPU worker to take it")
    assert f"submission={gpu.id} " not in (site.tmp / "cpu-only.log").read_text()
    cache.delete("grading-workers-online")
    assert NO_GPU not in client.get(reverse("submissions:status", args=[gpu.id])).content.decode()


def test_a_burst_delays_another_student_by_one_grading_at_most(grading_site, student, django_user_model, settings):
    site = grading_site
    settings.SUBMISSIONS_IN_FLIGHT_MAX = 3
    other = django_user_model.objects.create_user(username="olga", password="a-long-password-2", role="student")
    site.worker("only")
    burst, refused = [], 0
    for _ in range(10):
        try:
            burst.append(site.submit(student, code=slow_solution(1)).id)
        except SubmissionRefused as error:
            refused += 1
            assert "waiting for a verdict" in str(error)
    assert (len(burst), refused) == (3, 7)
    mine = site.submit(other).id
    site.wait_all_finished(burst + [mine], timeout=120)
    started = dict(Submission.objects.filter(id__in=burst + [mine]).values_list("id", "started_at"))
    ahead = sum(started[i] < started[mine] for i in burst)
    assert ahead <= 1, f"{ahead} of the burst were graded before the other student"
    report("burst of 10 by one student", accepted=3, refused=7, gradings_ahead_of_another_student=ahead)
