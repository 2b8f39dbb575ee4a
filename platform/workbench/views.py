from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.http import AuthenticatedHttpRequest
from catalog.selectors import exercises_published
from workbench.models import PracticeRun
from workbench.practice import practice_run_give_up_if_late
from workbench.selectors import hints_of
from workbench.services import PracticeRateLimited, draft_save, hint_reveal, practice_run_start


@login_required
@require_POST
def draft_save_view(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    """The editor saves here a moment after each change (no page reload)."""
    exercise = get_object_or_404(exercises_published(), slug=slug)
    try:
        draft = draft_save(user=request.user, exercise=exercise, code=request.POST.get("code", ""))
    except ValidationError as error:
        return JsonResponse({"saved": False, "error": " ".join(error.messages)}, status=400)
    return JsonResponse({"saved": True, "updated_at": draft.updated_at.isoformat()})


@login_required
@require_POST
def practice_start_view(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    """ "Run the visible checks": htmx gets the live result box, a plain form its own page."""
    exercise = get_object_or_404(exercises_published(), slug=slug)
    try:
        run = practice_run_start(user=request.user, exercise=exercise, code=request.POST.get("code", ""))
    except ValidationError as error:
        # htmx swaps in 2xx answers only: it gets the refusal as the result box's content.
        status = 200 if request.headers.get("HX-Request") else 429 if isinstance(error, PracticeRateLimited) else 400
        context = {"errors": error.messages, "exercise": exercise}
        return render(request, _practice_template(request), context, status=status)
    if request.headers.get("HX-Request"):
        return render(request, "workbench/_practice.html", {"run": run, "exercise": exercise})
    return redirect("workbench:practice_status", pk=run.pk)


@login_required
def practice_status_view(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    run = get_object_or_404(PracticeRun.objects.select_related("exercise_version__exercise"), pk=pk, user=request.user)
    run = practice_run_give_up_if_late(run)
    return render(request, _practice_template(request), {"run": run, "exercise": run.exercise_version.exercise})


def _practice_template(request: HttpRequest) -> str:
    return "workbench/_practice.html" if request.headers.get("HX-Request") else "workbench/practice.html"


@login_required
@require_POST
def hint_reveal_view(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    """ "Show a hint": htmx gets the hints box again, a plain form goes back to the exercise."""
    exercise = get_object_or_404(exercises_published(), slug=slug)
    number = request.POST.get("number", "")
    errors = [] if number.isdigit() else [_("Say which hint to open.")]
    if not errors:
        try:
            hint_reveal(user=request.user, exercise=exercise, number=int(number))
        except ValidationError as refusal:
            errors = refusal.messages
    if request.headers.get("HX-Request"):
        # htmx swaps in 2xx answers only: a refusal comes inside the hints box.
        context = {"hints": hints_of(request.user, exercise), "exercise": exercise, "errors": errors}
        return render(request, "workbench/_hints.html", context)
    for text in errors:
        messages.error(request, text)
    return redirect(reverse("submissions:exercise_detail", args=[slug]) + "#hints")
