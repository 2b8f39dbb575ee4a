from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST

from accounts.http import AuthenticatedHttpRequest
from quizzes import selectors
from quizzes.forms import CustomQuizForm
from quizzes.models import AttemptItem, QuizAttempt
from quizzes.services import (
    AttemptClosed,
    quiz_answer_save,
    quiz_expire_if_due,
    quiz_finish,
    quiz_start_bank,
    quiz_start_custom,
    quiz_start_review,
)


def _home(request: AuthenticatedHttpRequest, form: CustomQuizForm | None = None, status: int = 200) -> HttpResponse:
    topics = selectors.topics_with_counts()
    attempts = list(selectors.attempts_of(request.user)[:20])
    for attempt in attempts:
        attempt.title = selectors.attempt_title(attempt)
    context = {
        "banks": selectors.banks_published(),
        "topics": topics,
        "form": form or CustomQuizForm(topics=topics),
        "review_due": selectors.review_due_count(request.user),
        "attempts": attempts,
    }
    return render(request, "quizzes/home.html", context, status=status)


@login_required
def quiz_home(request: AuthenticatedHttpRequest) -> HttpResponse:
    return _home(request)


@login_required
@require_POST
def quiz_start_bank_view(request: AuthenticatedHttpRequest, uid: str) -> HttpResponse:
    bank = get_object_or_404(selectors.banks_published(), uid=uid)
    attempt = quiz_start_bank(user=request.user, bank=bank, timed=request.POST.get("timed") == "on")
    return redirect("quizzes:attempt", pk=attempt.pk)


@login_required
@require_POST
def quiz_start_custom_view(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = CustomQuizForm(request.POST, topics=selectors.topics_with_counts())
    if not form.is_valid():
        return _home(request, form=form, status=400)
    try:
        attempt = quiz_start_custom(user=request.user, topic=form.cleaned_data["topic"],
                                    difficulty=form.cleaned_data["difficulty"], count=form.cleaned_data["count"],
                                    time_limit_s=form.time_limit_s)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
        return redirect("quizzes:home")
    return redirect("quizzes:attempt", pk=attempt.pk)


@login_required
@require_POST
def quiz_start_review_view(request: AuthenticatedHttpRequest) -> HttpResponse:
    try:
        attempt = quiz_start_review(user=request.user)
    except ValidationError as error:
        messages.info(request, " ".join(error.messages))
        return redirect("quizzes:home")
    return redirect("quizzes:attempt", pk=attempt.pk)


@login_required
def attempt_detail(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    attempt = quiz_expire_if_due(get_object_or_404(selectors.attempts_of(request.user), pk=pk))
    context = {"attempt": attempt, "title": selectors.attempt_title(attempt)}
    if attempt.is_open:
        context.update(questions=selectors.attempt_questions(attempt), now=timezone.now())
        return render(request, "quizzes/take.html", context)
    context.update(selectors.attempt_results(attempt))
    return render(request, "quizzes/results.html", context)


@login_required
@require_POST
def answer_save_view(request: AuthenticatedHttpRequest, pk: int, position: int) -> HttpResponse:
    """Save one answer (htmx posts each question's form as it changes)."""
    try:
        item = quiz_answer_save(user=request.user, attempt_id=pk, position=position, fields=dict(request.POST.lists()))
    except (QuizAttempt.DoesNotExist, AttemptItem.DoesNotExist):
        raise Http404 from None
    except AttemptClosed as closed:
        response = render(request, "quizzes/_save_state.html", {"closed": closed.attempt}, status=409)
        response["HX-Redirect"] = reverse("quizzes:attempt", args=[pk])
        return response
    except ValidationError as error:
        return render(request, "quizzes/_save_state.html", {"error": " ".join(error.messages)}, status=400)
    return render(request, "quizzes/_save_state.html", {"item": item})


@login_required
@require_POST
def attempt_finish_view(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    try:
        quiz_finish(user=request.user, attempt_id=pk)
    except QuizAttempt.DoesNotExist:
        raise Http404 from None
    return redirect("quizzes:attempt", pk=pk)
