"""The account page: the settings accounts owns, and under them the student's history and progress."""
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse

from accounts.http import AuthenticatedHttpRequest
from accounts.views import profile
from progress.selectors import progress_of, recent_quiz_results, recent_submissions


@login_required
def account(request: AuthenticatedHttpRequest) -> HttpResponse:
    record = {
        "progress": progress_of(request.user),
        "submissions": recent_submissions(request.user),
        "quiz_results": recent_quiz_results(request.user),
    }
    return profile(request, template_name="progress/account.html", extra_context=record)
