from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_POST

from catalog.selectors import exercises_published
from workbench.services import draft_save


@login_required
@require_POST
def draft_save_view(request: HttpRequest, slug: str) -> HttpResponse:
    """The editor saves here a moment after each change (no page reload)."""
    exercise = get_object_or_404(exercises_published(), slug=slug)
    try:
        draft = draft_save(user=request.user, exercise=exercise, code=request.POST.get("code", ""))
    except ValidationError as error:
        return JsonResponse({"saved": False, "error": " ".join(error.messages)}, status=400)
    return JsonResponse({"saved": True, "updated_at": draft.updated_at.isoformat()})
