from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.http import AuthenticatedHttpRequest
from catalog.models import Exercise
from catalog.selectors import exercises_published
from courses.selectors import course_for
from grading.models import Submission
from leaderboards.selectors import (
    best_and_latest,
    board_index,
    course_board,
    exercise_board,
    speed_among_accepted,
    stale_progress,
)
from leaderboards.services import stale_entries_regrade

LIVE_EVERY_S = 5


def _title(exercise: Exercise) -> str:
    return exercise.current_version.title if exercise.current_version else exercise.slug


def _page(request: HttpRequest) -> int:
    value = request.GET.get("page", "1")
    return int(value) if value.isdigit() else 1


def _render(request: HttpRequest, context: dict) -> HttpResponse:
    """The whole page, or only the board when htmx polls for a new best."""
    template = "leaderboards/_board.html" if request.headers.get("HX-Request") else "leaderboards/board.html"
    return render(request, template, {"live_every_s": LIVE_EVERY_S, **context})


@login_required
def index(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Every exercise's board, in the order the exercises are suggested, with your place on each."""
    return render(request, "leaderboards/index.html", {"boards": board_index(request.user)})


@login_required
def your_rank(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    """Where the viewer's best stands on the exercise's site-wide board: a line the verdict
    page loads once the verdict is in (the board keeps the best, not the latest)."""
    exercise = get_object_or_404(exercises_published(), slug=slug)
    board = exercise_board(exercise, viewer=request.user)
    speed = None
    if (pk := request.GET.get("submission", "")).isdigit():
        submission = get_object_or_404(Submission, pk=int(pk), user=request.user, exercise_version__exercise=exercise)
        speed = speed_among_accepted(submission)
    return render(request, "leaderboards/_your_rank.html", {"exercise": exercise, "board": board, "speed": speed})


@login_required
def exercise_view(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    exercise = get_object_or_404(exercises_published(), slug=slug)
    board = exercise_board(exercise, viewer=request.user, page=_page(request))
    current, total = stale_progress(exercise) if request.user.is_instructor else (0, 0)
    return _render(
        request,
        {
            "exercise": exercise,
            "board": board,
            "title": _title(exercise),
            "regraded": current,
            "entries": total,
            "mine": best_and_latest(exercise, request.user),
        },
    )


@login_required
def exercise_course_view(request: AuthenticatedHttpRequest, slug: str, pk: int) -> HttpResponse:
    course, membership = course_for(request.user, pk)
    exercise = get_object_or_404(exercises_published(), slug=slug)
    board = exercise_board(
        exercise, viewer=request.user, page=_page(request), course=course, real_names=membership.is_staff
    )
    return _render(
        request,
        {
            "exercise": exercise,
            "course": course,
            "membership": membership,
            "board": board,
            "title": _title(exercise),
        },
    )


@login_required
def course_view(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    course, membership = course_for(request.user, pk)
    board = course_board(course, viewer=request.user, page=_page(request), real_names=membership.is_staff)
    return _render(
        request, {"course": course, "membership": membership, "board": board, "title": course.title, "points": True}
    )


@login_required
@require_POST
def regrade_stale(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    if not request.user.is_instructor:
        raise Http404
    exercise = get_object_or_404(exercises_published(), slug=slug)
    ids = stale_entries_regrade(exercise)
    messages.success(
        request, _("%(n)s earlier entries are being graded against the current version.") % {"n": len(ids)}
    )
    return redirect("leaderboards:exercise", exercise.slug)
