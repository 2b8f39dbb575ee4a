from django.db.models import QuerySet

from grading.models import Submission


def submissions_of(user, exercise) -> QuerySet[Submission]:
    return Submission.objects.filter(user=user, exercise_version__exercise=exercise).select_related(
        "exercise_version"
    )
