import hmac

from django.conf import settings
from django.contrib.admin.views.decorators import staff_member_required
from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache

from accounts.http import AuthenticatedHttpRequest
from operations.selectors import grading_snapshot, prometheus_text


@never_cache
def healthz(request: HttpRequest) -> HttpResponse:
    """200 while the database answers: what compose's and a load balancer's checks ask."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as error:  # any database failure means "not healthy", said plainly
        return HttpResponse(f"database unavailable: {type(error).__name__}\n", status=503, content_type="text/plain")
    return HttpResponse("ok\n", content_type="text/plain")


def metrics_allowed(request: HttpRequest) -> bool:
    """The scraper's bearer token (METRICS_TOKEN), compared in constant time, or a staff login."""
    scheme, _sep, presented = request.headers.get("Authorization", "").partition(" ")
    token = settings.METRICS_TOKEN
    if token and scheme.lower() == "bearer" and hmac.compare_digest(presented.strip().encode(), token.encode()):
        return True
    return bool(request.user.is_authenticated and request.user.is_staff)


@never_cache
def metrics(request: HttpRequest) -> HttpResponse:
    """Prometheus scrapes this with METRICS_TOKEN as its bearer token; staff may read it logged in."""
    if not metrics_allowed(request):
        refused = HttpResponse("metrics: a bearer token or a staff login is needed\n", status=401,
                               content_type="text/plain")
        refused["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return refused
    return HttpResponse(prometheus_text(grading_snapshot()), content_type="text/plain; version=0.0.4")


@staff_member_required
@never_cache
def dashboard(request: AuthenticatedHttpRequest) -> HttpResponse:
    return render(request, "operations/dashboard.html", {"snapshot": grading_snapshot()})
