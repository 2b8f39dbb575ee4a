from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import get_language

from glossary.selectors import glossary_entries


def glossary_index(request: HttpRequest) -> HttpResponse:
    language = get_language() or "en"
    return render(request, "glossary/index.html", {
        "entries": glossary_entries(language),
        "separator": "、" if language.startswith("zh") else ", ",
    })
