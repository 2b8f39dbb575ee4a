from catalog.models import Exercise
from workbench.models import Draft


def draft_code(user, exercise: Exercise) -> str | None:
    """The student's saved editor content for ``exercise``, or None if they never typed there."""
    return Draft.objects.filter(user=user, exercise=exercise).values_list("code", flat=True).first()
