from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, render

from catalog.selectors import exercises_published
from submissions.forms import SubmissionForm
from submissions.selectors import submissions_of


@login_required
def exercise_list(request):
    return render(request, "catalog/exercise_list.html", {"exercises": exercises_published()})


@login_required
def exercise_detail(request, slug: str):
    exercise = get_object_or_404(exercises_published(), slug=slug)
    previous = submissions_of(request.user, exercise)
    latest = previous.first()
    form = SubmissionForm(initial={"code": latest.code if latest else exercise.current_version.starter})
    return render(
        request,
        "catalog/exercise_detail.html",
        {"exercise": exercise, "version": exercise.current_version, "form": form, "submissions": previous[:10]},
    )
