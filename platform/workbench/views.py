"""The student's exercise page and what it calls: the exercise list, an exercise with its code
form, a submission's verdict, drafts saved as they type, and "run the visible checks"."""
import difflib
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.http import AuthenticatedHttpRequest
from catalog.models import Exercise
from catalog.selectors import exercises_published
from grading.models import Submission
from grading.selectors import submissions_of, waiting_for_a_missing_worker
from grading.services import SubmissionRefused, submission_create
from workbench.forms import SubmissionForm
from workbench.messages import DIFFICULTY_ORDER
from workbench.models import PracticeRun
from workbench.practice import practice_run_give_up_if_late
from workbench.selectors import (
    common_wrong_answers,
    continue_with,
    draft_code,
    exercise_entries,
    exercise_tags,
    hints_of,
    next_exercise,
)
from workbench.services import PracticeRateLimited, draft_save, hint_reveal, practice_run_start
from workbench.verdicts import error_lines


def exercise_list(request: HttpRequest) -> HttpResponse:
    """The home page: for a visitor, what the site is; for a student, where they left off and
    the exercises."""
    if not request.user.is_authenticated:
        return render(request, "workbench/welcome.html", {"exercises": exercises_published().count()})
    user = request.user
    difficulty, tag = request.GET.get("difficulty", ""), request.GET.get("tag", "")
    entries = exercise_entries(user, difficulty=difficulty, tag=tag)
    tags = exercise_tags()
    context = {
        "entries": entries, "difficulty": difficulty, "tag": tag, "difficulties": list(DIFFICULTY_ORDER),
        "tags": tags if not tag or tag in tags else sorted([*tags, tag]),
        "solved": sum(e.state == "solved" for e in entries),
        "resume": None if difficulty or tag else continue_with(user, entries),
    }
    return render(request, "workbench/exercise_list.html", context)


def _exercise_page(
    request: AuthenticatedHttpRequest,
    exercise: Exercise,
    form: SubmissionForm,
    status: int = 200,
    error_lines: list[dict[str, Any]] | None = None,
) -> HttpResponse:
    context = {
        "exercise": exercise,
        "version": exercise.current_version,
        "form": form,
        "submissions": submissions_of(request.user, exercise)[:10],
        "error_lines": error_lines or [],
        "wrong_answers": common_wrong_answers(request.user, exercise),
    }
    return render(request, "workbench/exercise_detail.html", context, status=status)


@login_required
def exercise_detail(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    exercise = get_object_or_404(exercises_published(), slug=slug)
    latest = submissions_of(request.user, exercise).first()
    starter = exercise.current_version.starter if exercise.current_version else ""
    draft = draft_code(request.user, exercise)  # what they last typed, even if never submitted
    code = draft if draft is not None else latest.code if latest else starter
    # The last verdict's error lines, marked in the editor's gutter while its code is still there.
    marked = error_lines(latest.result) if latest and latest.result and latest.code == code else []
    return _exercise_page(request, exercise, SubmissionForm(initial={"code": code}), error_lines=marked)


@login_required
@require_POST
def submission_create_view(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    exercise = get_object_or_404(exercises_published(), slug=slug)
    form = SubmissionForm(request.POST)
    status = 400
    if form.is_valid():
        try:
            submission = submission_create(user=request.user, exercise=exercise, code=form.cleaned_data["code"] or "",
                                           idempotency_key=form.cleaned_data["idempotency_key"])
        except SubmissionRefused as refused:  # a limit, not the code: said above the form
            form.add_error(None, refused)
            status = 429
        except ValidationError as error:
            form.add_error("code", error)
        else:
            return redirect("submissions:detail", pk=submission.pk)
    return _exercise_page(request, exercise, form, status=status)


def _own_submission(request: AuthenticatedHttpRequest, pk: int) -> Submission:
    return get_object_or_404(
        Submission.objects.select_related("exercise_version__exercise"), pk=pk, user=request.user
    )


@login_required
def submission_detail(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    submission = _own_submission(request, pk)
    previous = (
        submissions_of(request.user, submission.exercise_version.exercise).filter(pk__lt=submission.pk).order_by("-pk")
        .first()
    )
    back = request.GET.get("back", "")
    context = {**_status_context(submission), "previous": previous,
               "changes": code_changes(previous.code, submission.code) if previous else [],
               # Only a course page of this site: the link must not lead anywhere else.
               "back": back if back.startswith("/courses/") and "//" not in back else ""}
    return render(request, "workbench/submission_detail.html", context)


def code_changes(before: str, after: str) -> list[tuple[str, str]]:
    """A unified diff as (kind, line) pairs the page colours: "add", "del", "hunk" or "same"."""
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=2)
    kinds = {"+": "add", "-": "del", "@": "hunk"}
    return [(kinds.get(line[:1], "same"), line) for line in list(lines)[2:]]  # no ---/+++ header


@login_required
def submission_status(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """The live part of the page; htmx polls it until the submission is finished."""
    return render(request, "workbench/_submission_status.html", _status_context(_own_submission(request, pk)))


def _status_context(submission: Submission) -> dict[str, object]:
    context = {"submission": submission, "no_worker": waiting_for_a_missing_worker(submission),
               "needs_gpu": submission.exercise_version.needs_gpu}
    if submission.verdict == "ACCEPTED":
        context["next_exercise"] = next_exercise(submission.user, submission.exercise_version.exercise)
        context["has_wrong_answers"] = bool((submission.exercise_version.spec or {}).get("why"))
    return context


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
