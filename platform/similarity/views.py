"""Similarity reports. An exercise's report (every student on the site) is for staff; an
assignment's is for its course's instructors and assistants, through course_for(): 404 to
anyone else, so a student never learns a report exists. Holding a board entry is an
instructor's (or staff's) action."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from catalog.models import Exercise
from courses.selectors import course_for, student_ids
from leaderboards.models import Entry
from leaderboards.services import entry_hold, entry_release
from similarity.selectors import assignment_counts, assignment_report, exercise_report, pair_detail


def _site_exercise(request: HttpRequest, slug: str) -> Exercise:
    if not request.user.is_staff:
        raise Http404
    return get_object_or_404(Exercise, slug=slug)


def _hold(request: HttpRequest, entry: Entry) -> None:
    if request.POST.get("action") == "release":
        entry_release(entry)
    else:
        entry_hold(entry, by=request.user)  # type: ignore[arg-type]


@login_required
def exercise_view(request: HttpRequest, slug: str) -> HttpResponse:
    exercise = _site_exercise(request, slug)
    section = exercise_report(exercise)
    for pair in section.pairs:
        pair.url = reverse("similarity:exercise_pair", args=[slug, pair.a.submission_id, pair.b.submission_id])
    hold_url = reverse("similarity:exercise_hold", args=[slug])
    context = {"title": section.title, "sections": [section], "hold_url": hold_url}
    return render(request, "similarity/report.html", context)


@login_required
def exercise_pair(request: HttpRequest, slug: str, a: int, b: int) -> HttpResponse:
    exercise = _site_exercise(request, slug)
    detail = pair_detail(a, b, exercise_id=exercise.id)
    back = reverse("similarity:exercise", args=[slug])
    return render(request, "similarity/pair.html", {"detail": detail, "back": back, "title": exercise.slug})


@login_required
@require_POST
def exercise_hold(request: HttpRequest, slug: str) -> HttpResponse:
    exercise = _site_exercise(request, slug)
    entry = get_object_or_404(Entry, id=request.POST.get("entry", 0), exercise=exercise)
    _hold(request, entry)
    return redirect("similarity:exercise", slug)


@login_required
def assignment_view(request: HttpRequest, pk: int, assignment_pk: int) -> HttpResponse:
    course, membership = course_for(request.user, pk, staff=True)  # type: ignore[arg-type]
    assignment = get_object_or_404(course.assignments, pk=assignment_pk)
    sections = assignment_report(course, assignment)
    for section in sections:
        for pair in section.pairs:
            pair.url = reverse(
                "similarity:assignment_pair", args=[pk, assignment_pk, pair.a.submission_id, pair.b.submission_id]
            )
    return render(
        request,
        "similarity/report.html",
        {
            "title": assignment.title,
            "course": course,
            "membership": membership,
            "sections": sections,
            "hold_url": reverse("similarity:assignment_hold", args=[pk, assignment_pk])
            if membership.role == membership.Role.INSTRUCTOR
            else None,
        },
    )


@login_required
def assignment_pair(request: HttpRequest, pk: int, assignment_pk: int, a: int, b: int) -> HttpResponse:
    course, membership = course_for(request.user, pk, staff=True)  # type: ignore[arg-type]
    assignment = get_object_or_404(course.assignments, pk=assignment_pk)
    if not assignment_counts(course, assignment, [a, b]):
        raise Http404
    exercise_id = assignment.items.filter(scores__submission_id=a).values_list(
        "exercise_version__exercise_id", flat=True
    ).first()
    if exercise_id is None:
        raise Http404
    detail = pair_detail(a, b, exercise_id=exercise_id)
    back = reverse("similarity:assignment", args=[pk, assignment_pk])
    return render(
        request,
        "similarity/pair.html",
        {"detail": detail, "back": back, "title": assignment.title, "course": course, "membership": membership},
    )


@login_required
@require_POST
def assignment_hold(request: HttpRequest, pk: int, assignment_pk: int) -> HttpResponse:
    course, _membership = course_for(request.user, pk, instructor=True)  # type: ignore[arg-type]
    assignment = get_object_or_404(course.assignments, pk=assignment_pk)
    # Only the entry of one of the course's students, on an exercise of this assignment.
    entry = get_object_or_404(
        Entry,
        id=request.POST.get("entry", 0),
        user_id__in=student_ids(course),
        exercise_id__in=assignment.items.values("exercise_version__exercise_id"),
    )
    _hold(request, entry)
    return redirect("similarity:assignment", pk, assignment_pk)
