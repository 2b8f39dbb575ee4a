"""The authoring pages: upload a zipped exercise folder, watch it validate, preview it, publish it."""
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.http import AuthenticatedHttpRequest
from authoring.forms import ExerciseUploadForm
from authoring.selectors import exercise_replaced_by, upload_report, uploads_of
from authoring.services import author_check, upload_create, upload_publish, upload_spec
from catalog.languages import language_key
from catalog.models import ExerciseUpload
from grading.dispatch import UPLOAD_JOB


def _upload(request: AuthenticatedHttpRequest, upload_id: int) -> ExerciseUpload:
    return get_object_or_404(uploads_of(request.user), id=upload_id)


@login_required
def upload_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    author_check(request.user)
    form = ExerciseUploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        archive = form.cleaned_data["archive"]
        try:
            upload = upload_create(user=request.user, data=archive.read(), filename=archive.name)
        except ValidationError as error:
            form.add_error("archive", error)
        else:
            return redirect("authoring:upload_detail", upload.id)
    status = 400 if request.method == "POST" else 200
    context = {"form": form, "uploads": uploads_of(request.user)[:50]}
    return render(request, "authoring/upload_list.html", context, status=status)


@login_required
def upload_detail(request: AuthenticatedHttpRequest, upload_id: int) -> HttpResponse:
    author_check(request.user)
    upload = _upload(request, upload_id)
    context = {
        "upload": upload,
        "report": upload_report(upload),
        "pending": not UPLOAD_JOB.progress_of(upload).finished,
        "replaces": exercise_replaced_by(upload),
    }
    template = "authoring/_status.html" if request.headers.get("HX-Request") else "authoring/upload_detail.html"
    return render(request, template, context)


@login_required
def upload_preview(request: AuthenticatedHttpRequest, upload_id: int) -> HttpResponse:
    """The statement page as a student will see it, in the language asked for."""
    author_check(request.user)
    upload = _upload(request, upload_id)
    if upload.error and not upload.uid:
        messages.error(request, _("This upload cannot be previewed: %(error)s") % {"error": upload.error})
        return redirect("authoring:upload_detail", upload.id)
    spec = upload_spec(upload)
    key = language_key(request.GET.get("lang"))
    return render(request, "authoring/upload_preview.html", {
        "replaces": exercise_replaced_by(upload),
        "upload": upload,
        "spec": spec,
        "title": spec.title[key],
        "summary": spec.summary[key],
        "statement": spec.statement[key],
        "language": key,
    })


@login_required
@require_POST
def upload_publish_view(request: AuthenticatedHttpRequest, upload_id: int) -> HttpResponse:
    author_check(request.user)
    upload = _upload(request, upload_id)
    try:
        exercise = upload_publish(user=request.user, upload=upload)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
        return redirect("authoring:upload_detail", upload.id)
    number = exercise.current_version.number if exercise.current_version else 0
    messages.success(request, _("Published: students now see version %(number)s.") % {"number": number})
    return redirect("submissions:exercise_detail", exercise.slug)
