from django.db.models import QuerySet

from accounts.models import User
from catalog.models import ExerciseUpload
from grader.host import ExerciseReport


def uploads_of(user: User) -> QuerySet[ExerciseUpload]:
    """An instructor's uploads, newest first (every upload for a superuser)."""
    uploads = ExerciseUpload.objects.select_related("uploaded_by", "published_version")
    return uploads if getattr(user, "is_superuser", False) else uploads.filter(uploaded_by=user)


def upload_report(upload: ExerciseUpload) -> ExerciseReport | None:
    return ExerciseReport.from_dict(upload.report) if upload.report else None
