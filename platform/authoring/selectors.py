from django.db.models import Q, QuerySet

from accounts.models import User
from catalog.models import Exercise, ExerciseUpload
from catalog.selectors import exercises_published
from grader.host import ExerciseReport


def uploads_of(user: User) -> QuerySet[ExerciseUpload]:
    """An instructor's uploads, newest first (every upload for a superuser)."""
    uploads = ExerciseUpload.objects.select_related("uploaded_by", "published_version")
    return uploads if getattr(user, "is_superuser", False) else uploads.filter(uploaded_by=user)


def upload_report(upload: ExerciseUpload) -> ExerciseReport | None:
    return ExerciseReport.from_dict(upload.report) if upload.report else None


def exercise_replaced_by(upload: ExerciseUpload) -> Exercise | None:
    """The published exercise this upload would become a new version of (same id or folder):
    publishing it changes what that exercise's students see, so the page must say so."""
    if not upload.uid and not upload.slug:
        return None
    same = Q(uid=upload.uid) if upload.uid else Q()
    if upload.slug:
        same |= Q(slug=upload.slug)
    exercise = exercises_published().filter(same).first()
    if exercise is None:
        return None
    published = upload.published_version
    if published is not None and published.exercise_id == exercise.id:
        return None  # this upload already is that exercise's version
    return exercise
