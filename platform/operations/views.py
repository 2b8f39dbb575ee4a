from django.contrib.admin.views.decorators import staff_member_required
from django.db import connection
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache

from operations.selectors import grading_snapshot, prometheus_text


@never_cache
def healthz(request) -> HttpResponse:
    """200 while the database answers: what compose's and a load balancer's checks ask."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as error:  # any database failure means "not healthy", said plainly
        return HttpResponse(f"database unavailable: {type(error).__name__}\n", status=503, content_type="text/plain")
    return HttpResponse("ok\n", content_type="text/plain")


@never_cache
def metrics(request) -> HttpResponse:
    """Prometheus scrapes this from inside the deployment (publish it to nobody else)."""
    return HttpResponse(prometheus_text(grading_snapshot()), content_type="text/plain; version=0.0.4")


@staff_member_required
@never_cache
def dashboard(request):
    return render(request, "operations/dashboard.html", {"snapshot": grading_snapshot()})
