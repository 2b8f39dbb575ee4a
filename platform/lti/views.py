"""The LMS's doors (login, launch, keys) and the pages an instructor sees from it: the picker
that places items, and the course's grade and roster sync."""

from django.contrib.auth import login as auth_login
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST
from pylti1p3.exception import LtiException

from accounts.models import User
from courses.selectors import course_for
from lti import services
from lti.models import GradeSync, LinkedCourse
from lti.tasks import sync_roster


def _signed_in(request: HttpRequest) -> User:
    assert isinstance(request.user, User), "login_required let an anonymous visitor through"
    return request.user


def _refused(request: HttpRequest, error: services.LaunchRefused) -> HttpResponse:
    return render(request, "lti/refused.html", {"reason": error.reason, "detail": error.detail}, status=400)


@csrf_exempt  # the platform posts here; the state cookie and nonce do CSRF's work
@xframe_options_exempt
def login(request: HttpRequest) -> HttpResponse:
    try:
        return services.oidc_login_redirect(request)
    except services.LaunchRefused as error:
        return _refused(request, error)


@csrf_exempt
@xframe_options_exempt
@require_POST
def launch(request: HttpRequest) -> HttpResponse:
    try:
        landing = services.launch_accept(request)
    except services.LaunchRefused as error:
        return _refused(request, error)
    auth_login(request, landing.user, backend="django.contrib.auth.backends.ModelBackend")
    request.session[services.SESSION_LAUNCH] = landing.launch_id
    return redirect(landing.url)


def not_ready(request: HttpRequest) -> HttpResponse:
    return render(request, "lti/not_ready.html")


@login_required
def course(request: HttpRequest, pk: int) -> HttpResponse:
    course, membership = course_for(_signed_in(request), pk, staff=True)
    links = LinkedCourse.objects.filter(course=course).select_related("context")
    syncs = (
        GradeSync.objects.filter(link__item__assignment__course=course)
        .select_related("user", "link__item__exercise_version", "link__item__bank", "link__item__interview")
        .order_by("link__item_id", "user__username")
    )
    return render(
        request, "lti/course.html", {"course": course, "membership": membership, "links": links, "syncs": syncs}
    )


@login_required
@require_POST
def roster(request: HttpRequest, pk: int) -> HttpResponse:
    course, _membership = course_for(_signed_in(request), pk, instructor=True)
    for link in LinkedCourse.objects.filter(course=course):
        sync_roster.delay(link.pk)
    return redirect("lti:course", pk=course.pk)


@login_required
@xframe_options_exempt
def pick(request: HttpRequest, pk: int) -> HttpResponse:
    course, _membership = course_for(_signed_in(request), pk, instructor=True)
    launch_id = request.session.get(services.SESSION_LAUNCH)
    if request.method == "POST":
        try:
            launch = services.launch_restore(request, launch_id or "")
            returning = services.deep_link_response(launch=launch, course=course, keys=request.POST.getlist("choice"))
        except LtiException:
            return _refused(request, services.LaunchRefused(str(services.REASONS["state"])))
        except services.LaunchRefused as error:
            return _refused(request, error)
        return render(request, "lti/returning.html", {"returning": returning})
    return render(request, "lti/pick.html", {"course": course, "choices": services.picker_choices()})
