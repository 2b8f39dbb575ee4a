from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from accounts.http import AuthenticatedHttpRequest
from catalog.selectors import exercises_published
from workbench.models import PracticeRun
from workbench.practice import practice_run_give_up_if_late
from workbench.services import PracticeRateLimited, draft_save, practice_run_start


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
