from django.db.models import QuerySet

from catalog.models import Exercise


def exercises_published() -> QuerySet[Exercise]:
    return Exercise.objects.filter(retired=False, current_version__isnull=False).select_related(
        "current_version"
    )
