from collections.abc import Callable

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST

from accounts.http import AuthenticatedHttpRequest
from interviews import selectors
from interviews.models import InterviewAttempt, InterviewItem
from interviews.services import (
    InterviewClosed,
    NotCurrent,
    interview_answer,
    interview_answer_open,
    interview_back,
    interview_finish,
    interview_refresh,
    interview_self_score,
    interview_start,
    interview_submit_code,
)


@login_required
def interview_home(request: AuthenticatedHttpRequest) -> HttpResponse:
    history = [selectors.attempt_summary(a) for a in selectors.attempts_of(request.user)[:30]]
    return render(request, "interviews/home.html",
                  {"templates": selectors.templates_published(), "history": history})


@login_required
@require_POST
def interview_start_view(request: AuthenticatedHttpRequest, uid: str) -> HttpResponse:
    template = get_object_or_404(selectors.templates_published(), uid=uid)
    try:
        attempt = interview_start(user=request.user, template=template)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
        return redirect("interviews:home")
    return redirect("interviews:attempt", pk=attempt.pk)


@login_required
def interview_attempt(request: AuthenticatedHttpRequest, pk: int, error: str = "", status: int = 200) -> HttpResponse:
    try:
        attempt = interview_refresh(user=request.user, attempt_id=pk)
    except InterviewAttempt.DoesNotExist:
        raise Http404 from None
    context = {"attempt": attempt, "title": attempt.template.title, "sections": selectors.section_titles(attempt)}
    if attempt.is_open:
        context.update(step=selectors.current_step(attempt), now=timezone.now(), error=error)
        return render(request, "interviews/step.html", context, status=status)
    context.update(card=selectors.scorecard(attempt), error=error)
    return render(request, "interviews/scorecard.html", context, status=status)


def _refused(request: AuthenticatedHttpRequest, pk: int, exc: Exception) -> HttpResponse:
    """Answers to a closed interview or to an item no longer on screen: 409 and the page as it is."""
    if isinstance(exc, InterviewClosed):
        return interview_attempt(request, pk, error="closed", status=409)
    return interview_attempt(request, pk, error="not-current", status=409)


def _position(request: AuthenticatedHttpRequest) -> int:
    try:
        return int(request.POST.get("position", ""))
    except ValueError:
        raise Http404 from None


def _act_on_item(request: AuthenticatedHttpRequest, pk: int, action: Callable[[], object]) -> HttpResponse:
    """Run ``action`` on the current item; refusals and form errors go back to the attempt page."""
    try:
        action()
    except (InterviewAttempt.DoesNotExist, InterviewItem.DoesNotExist):
        raise Http404 from None
    except (InterviewClosed, NotCurrent) as exc:
        return _refused(request, pk, exc)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    return redirect("interviews:attempt", pk=pk)


@login_required
@require_POST
def interview_answer_view(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    return _act_on_item(request, pk, lambda: interview_answer(
        user=request.user, attempt_id=pk, position=_position(request), fields=dict(request.POST.lists())))


@login_required
@require_POST
def interview_open_view(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    return _act_on_item(request, pk, lambda: interview_answer_open(
        user=request.user, attempt_id=pk, position=_position(request), text=request.POST.get("answer", "")))


@login_required
@require_POST
def interview_self_score_view(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    position = _position(request)
    try:
        interview_self_score(user=request.user, attempt_id=pk, position=position,
                             ticked=request.POST.getlist("rubric"))
    except (InterviewAttempt.DoesNotExist, InterviewItem.DoesNotExist):
        raise Http404 from None
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    return redirect(f"{reverse('interviews:attempt', args=[pk])}#open-{position}")


@login_required
@require_POST
def interview_code_view(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    return _act_on_item(request, pk, lambda: interview_submit_code(
        user=request.user, attempt_id=pk, position=_position(request),
        code=request.POST.get("code", ""), skip="skip" in request.POST))


@login_required
@require_POST
def interview_back_view(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    try:
        interview_back(user=request.user, attempt_id=pk)
    except InterviewAttempt.DoesNotExist:
        raise Http404 from None
    except InterviewClosed as exc:
        return _refused(request, pk, exc)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    return redirect("interviews:attempt", pk=pk)


@login_required
@require_POST
def interview_finish_view(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    try:
        interview_finish(user=request.user, attempt_id=pk)
    except InterviewAttempt.DoesNotExist:
        raise Http404 from None
    return redirect("interviews:attempt", pk=pk)
