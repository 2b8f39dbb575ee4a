from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from catalog.selectors import exercises_published
from submissions.forms import SubmissionForm
from submissions.models import Submission
from submissions.selectors import submissions_of, waiting_for_a_missing_worker
from submissions.services import SubmissionRefused, submission_create


@login_required
@require_POST
def submission_create_view(request, slug: str):
    exercise = get_object_or_404(exercises_published(), slug=slug)
    form = SubmissionForm(request.POST)
    status = 400
    if form.is_valid():
        try:
            submission = submission_create(user=request.user, exercise=exercise, code=form.cleaned_data["code"],
                                           idempotency_key=form.cleaned_data["idempotency_key"])
        except SubmissionRefused as refused:
            form.add_error(None, refused)
            status = 429
        else:
            return redirect("submissions:detail", pk=submission.pk)
    context = {
        "exercise": exercise,
        "version": exercise.current_version,
        "form": form,
        "submissions": submissions_of(request.user, exercise)[:10],
    }
    return render(request, "catalog/exercise_detail.html", context, status=status)


def _own_submission(request, pk: int) -> Submission:
    return get_object_or_404(
        Submission.objects.select_related("exercise_version__exercise"), pk=pk, user=request.user
    )


@login_required
def submission_detail(request, pk: int):
    return render(request, "submissions/detail.html", _status_context(_own_submission(request, pk)))


@login_required
def submission_status(request, pk: int):
    """The live part of the page; htmx polls it until the submission is finished."""
    return render(request, "submissions/_status.html", _status_context(_own_submission(request, pk)))


def _status_context(submission: Submission) -> dict:
    return {"submission": submission, "no_worker": waiting_for_a_missing_worker(submission),
            "needs_gpu": submission.exercise_version.needs_gpu}
