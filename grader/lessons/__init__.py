"""The article's lessons as content files (``exercises/lessons/<slug>/``): loading, checking,
proving their code in the sandbox, and the engine traces their visualisations play.

Pure Python, no Django; the ``lessons`` app syncs what :func:`load_lessons` returns.
"""
from grader.lessons.content import (
                                    ARTICLE_SECTIONS,
                                    VISUALISATIONS,
                                    Lesson,
                                    LessonSet,
                                    Segment,
                                    check_lessons,
                                    load_lesson,
                                    load_lessons,
                                    split_segments,
                                    validate_lessons,
)

__all__ = ["ARTICLE_SECTIONS", "VISUALISATIONS", "Lesson", "LessonSet", "Segment", "check_lessons",
           "load_lesson", "load_lessons", "split_segments", "validate_lessons"]
