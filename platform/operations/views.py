from django.db import connection
from django.http import HttpResponse
from django.views.decorators.cache import never_cache


@never_cache
def healthz(request) -> HttpResponse:
    """200 while the database answers: what compose's and a load balancer's checks ask."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as error:  # any database failure means "not healthy", said plainly
        return HttpResponse(f"database unavailable: {type(error).__name__}\n", status=503, content_type="text/plain")
    return HttpResponse("ok\n", content_type="text/plain")
