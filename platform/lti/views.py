"""The LMS's doors (login, launch, keys, dynamic registration) and the pages an instructor sees
from it: the picker that places items, and the course's grade and roster sync; and the site
administrators' page of registrations."""

from functools import partial

from django.contrib.auth import login as auth_login
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST
from pylti1p3.exception import LtiException

from accounts.models import User
from courses.selectors import course_for
from lti import registration, services
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
    links = LinkedCourse.objects.filter(course=course).select_related("context__deployment__registration")
    rosters = [(link, services.roster_of(link)) for link in links]
    syncs = (
        GradeSync.objects.filter(link__item__assignment__course=course)
        .select_related("user", "link__item__exercise_version", "link__item__bank", "link__item__interview")
        .order_by("link__item_id", "user__username")
    )
    return render(
        request, "lti/course.html",
        {"course": course, "membership": membership, "rosters": rosters, "syncs": syncs,
         "syncing": any(link.roster_syncing for link in links)},
    )


@login_required
@require_POST
def roster(request: HttpRequest, pk: int) -> HttpResponse:
    course, _membership = course_for(_signed_in(request), pk, instructor=True)
    for link_id in services.roster_sync_request(course):
        transaction.on_commit(partial(sync_roster.delay, link_id))
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


@login_required
@never_cache
def registrations(request: HttpRequest) -> HttpResponse:
    """The platforms registered here, and one-time links that let an LMS register itself."""
    user = _signed_in(request)
    if not registration.may_register(user):
        context = {"reason": _("Only a site administrator makes registration links."), "detail": ""}
        return render(request, "lti/registration_refused.html", context, status=403)
    made = ""
    if request.method == "POST":
        # Shown once, on this answer: only the secret's digest is kept.
        _link, token = registration.registration_link_create(by=user, name=request.POST.get("name", ""))
        made = request.build_absolute_uri(reverse("lti:register", args=[token]))
    registered, links = registration.registration_overview()
    return render(request, "lti/registrations.html", {
        "registered": registered, "links": links, "made": made,
        "tool": registration.tool_urls(request.build_absolute_uri), "now": timezone.now(),
    })


@require_GET
@never_cache
@xframe_options_exempt  # the LMS opens the link in a frame or a pop-up of its own page
def register(request: HttpRequest, token: str) -> HttpResponse:
    try:
        registered = registration.registration_complete(
            token=token,
            openid_configuration=request.GET.get("openid_configuration", ""),
            registration_token=request.GET.get("registration_token", ""),
            urls=registration.tool_urls(request.build_absolute_uri),
        )
    except registration.RegistrationRefused as error:
        return render(request, "lti/registration_refused.html", {"reason": error.reason, "detail": error.detail},
                      status=400)
    return render(request, "lti/registered.html", {
        "registration": registered, "deployments": list(registered.deployments.all()),
    })
