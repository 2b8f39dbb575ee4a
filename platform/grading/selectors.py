from django.db.models import QuerySet

from accounts.models import User
from catalog.models import Exercise
from grading.models import Submission


def submissions_of(user: User, exercise: Exercise) -> QuerySet[Submission]:
    return Submission.objects.filter(user=user, exercise_version__exercise=exercise).select_related(
        "exercise_version"
    )
