from collections.abc import Callable
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.http import AuthenticatedHttpRequest
from grader.host import SandboxUnavailable
from lessons import selectors
from lessons.services import RateLimited, compile_flow_run, lesson_mark_read, lesson_quiz_start, playground_run


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


def _sandbox_call(call: Callable[..., dict[str, Any]], **kwargs: Any) -> JsonResponse:
    """Run one rate-limited sandbox call and answer JSON, with a clear message for every refusal."""
    try:
        return JsonResponse(call(**kwargs))
    except RateLimited as limited:
        response = JsonResponse({"ok": False, "limited": True, "error": _(
            "You have used your runs for now. Try again in %(s)d seconds.") % {"s": limited.retry_after_s}},
            status=429)
        response["Retry-After"] = str(limited.retry_after_s)
        return response
    except ValidationError as error:
        return JsonResponse({"ok": False, "error": " ".join(error.messages)}, status=400)
    except SandboxUnavailable:
        return JsonResponse({"ok": False, "error": _("The sandbox is not available right now; try again soon.")},
                            status=503)


@login_required
@require_POST
def playground_run_view(request: AuthenticatedHttpRequest) -> HttpResponse:
    return _sandbox_call(lambda **kw: playground_run(**kw).to_dict(), user=request.user,
                         code=request.POST.get("code", ""))


@login_required
@require_POST
def compile_flow_view(request: AuthenticatedHttpRequest) -> HttpResponse:
    return _sandbox_call(compile_flow_run, user=request.user, source=request.POST.get("source", ""))
