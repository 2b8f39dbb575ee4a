from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from catalog.models import Exercise
from workbench.models import Draft


def draft_save(*, user, exercise: Exercise, code: str) -> Draft:
    """Keep the student's editor content for this exercise (one draft each, last write wins)."""
    size = len(code.encode("utf-8"))
    if size > settings.SUBMISSION_MAX_BYTES:
        raise ValidationError(
            _("Your code is %(size)s bytes; the limit is %(limit)s bytes."),
            params={"size": size, "limit": settings.SUBMISSION_MAX_BYTES},
        )
    draft, _created = Draft.objects.update_or_create(user=user, exercise=exercise, defaults={"code": code})
    return draft
