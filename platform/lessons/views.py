from collections.abc import Callable
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_POST

from accounts.http import AuthenticatedHttpRequest
from lessons import selectors
from lessons.models import PlaygroundRun
from lessons.runs import PLAYGROUND_JOB
from lessons.services import (
    RateLimited,
    compile_flow_start,
    lesson_mark_read,
    lesson_quiz_start,
    playground_run_give_up_if_late,
    playground_run_start,
)


@login_required
def lesson_index(request: AuthenticatedHttpRequest) -> HttpResponse:
    path = selectors.learning_path(request.user)
    done = sum(1 for entry in path if entry["read"])
    return render(request, "lessons/index.html", {"path": path, "done": done})


@login_required
def lesson_detail(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    lesson = get_object_or_404(selectors.lessons_published(), slug=slug)
    return render(request, "lessons/detail.html", selectors.lesson_page(lesson, request.user))


@login_required
@require_POST
def lesson_read_view(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    lesson = get_object_or_404(selectors.lessons_published(), slug=slug)
    lesson_mark_read(user=request.user, lesson=lesson)
    return redirect("lessons:detail", slug=slug)


@login_required
@require_POST
def lesson_quiz_view(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    lesson = get_object_or_404(selectors.lessons_published(), slug=slug)
    try:
        attempt = lesson_quiz_start(user=request.user, lesson=lesson)
    except ValidationError:
        return redirect("lessons:detail", slug=slug)
    return redirect("quizzes:attempt", pk=attempt.pk)


@login_required
def playground(request: AuthenticatedHttpRequest) -> HttpResponse:
    return render(request, "lessons/playground.html", {"code": request.GET.get("code", "")[:16384]})


def _run_start(start: Callable[..., PlaygroundRun], **kwargs: Any) -> JsonResponse:
    """Queue one rate-limited run (a worker runs it) and answer where to ask for its result,
    with a clear message for every refusal. Nothing here touches the sandbox."""
    try:
        run = start(**kwargs)
    except RateLimited as limited:
        response = JsonResponse({"ok": False, "limited": True, "error": _(
            "You have used your runs for now. Try again in %(s)d seconds.") % {"s": limited.retry_after_s}},
            status=429)
        response["Retry-After"] = str(limited.retry_after_s)
        return response
    except ValidationError as error:
        return JsonResponse({"ok": False, "error": " ".join(error.messages)}, status=400)
    return JsonResponse(_run_document(run), status=202)


FAILURE_TEXT = {
    PlaygroundRun.Failure.UNAVAILABLE: gettext_lazy("The sandbox is not available right now; try again soon."),
    PlaygroundRun.Failure.LATE: gettext_lazy("No result came back in time; try again in a moment."),
    PlaygroundRun.Failure.INTERNAL: gettext_lazy("The run failed on our side, not because of your program; try again."),
}


def _run_document(run: PlaygroundRun) -> dict[str, Any]:
    """What the page polls: the state, and once finished the result or why there is none."""
    document: dict[str, Any] = {
        "id": run.pk, "kind": run.kind, "state": run.state, "state_label": run.get_state_display(),
        "finished": PLAYGROUND_JOB.progress_of(run).finished,
        "status_url": reverse("lessons:run_status", args=[run.pk]),
    }
    if run.state == PlaygroundRun.State.DONE:
        document["result"] = run.result
    elif run.state == PlaygroundRun.State.FAILED:
        document["error"] = str(FAILURE_TEXT[PlaygroundRun.Failure(run.failure or PlaygroundRun.Failure.INTERNAL)])
    return document


@login_required
@require_POST
def playground_run_view(request: AuthenticatedHttpRequest) -> HttpResponse:
    return _run_start(playground_run_start, user=request.user, code=request.POST.get("code", ""))


@login_required
@require_POST
def compile_flow_view(request: AuthenticatedHttpRequest) -> HttpResponse:
    return _run_start(compile_flow_start, user=request.user, source=request.POST.get("source", ""))


@login_required
@require_GET
def run_status_view(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """A run's state and result as JSON; only its owner may read it (404 for anyone else)."""
    run = get_object_or_404(PlaygroundRun, pk=pk, user=request.user)
    run = playground_run_give_up_if_late(run)
    return JsonResponse(_run_document(run))
