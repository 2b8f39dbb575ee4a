"""Which of the two texts (English, Simplified Chinese) a page shows: decided here only."""
from __future__ import annotations

from collections.abc import Mapping

from django.utils.translation import get_language

from grader.contract import LANGUAGES

ENGLISH, CHINESE = LANGUAGES  # the content's keys: "en", "zh-hans"


def language_key(language: str | None = None) -> str:
    """The content key for ``language`` (default: the active one): Chinese for any zh-*, else English."""
    return CHINESE if (language or get_language() or ENGLISH).lower().startswith("zh") else ENGLISH


def chinese() -> bool:
    return language_key() == CHINESE


def localized(text: Mapping[str, str]) -> str:
    """A bilingual {"en", "zh-hans"} text in the active language (English when the other is empty)."""
    return text.get(language_key()) or text.get(ENGLISH, "")
