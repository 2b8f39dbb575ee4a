from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, render

from catalog.selectors import exercises_published
from submissions.forms import SubmissionForm
from submissions.selectors import submissions_of
from workbench.messages import DIFFICULTY_ORDER
from workbench.selectors import draft_code, exercise_entries, exercise_tags


@login_required
def exercise_list(request):
    difficulty, tag = request.GET.get("difficulty", ""), request.GET.get("tag", "")
    entries = exercise_entries(request.user, difficulty=difficulty, tag=tag)
    context = {
        "entries": entries, "difficulty": difficulty, "tag": tag, "difficulties": list(DIFFICULTY_ORDER),
        "tags": exercise_tags(), "solved": sum(e.state == "solved" for e in entries),
    }
    return render(request, "catalog/exercise_list.html", context)


@login_required
def exercise_detail(request, slug: str):
    exercise = get_object_or_404(exercises_published(), slug=slug)
    previous = submissions_of(request.user, exercise)
    latest = previous.first()
    draft = draft_code(request.user, exercise)  # what they last typed, even if never submitted
    initial = draft if draft is not None else latest.code if latest else exercise.current_version.starter
    form = SubmissionForm(initial={"code": initial})
    return render(
        request,
        "catalog/exercise_detail.html",
        {"exercise": exercise, "version": exercise.current_version, "form": form, "submissions": previous[:10]},
    )
