"""Quiz banks and mock-interview templates: loading, validation, answer checking, proofs.

Pure Python (no Django): the platform stores what this package loads, and asks it to draw
parameters and to check answers. ``validate_all(content_dir, sandbox)`` is what
``manage.py validate_content`` calls.
"""
from grader.content_root import DIFFICULTIES
from grader.quizzes.answers import (
    ResponseError,
    display,
    instantiate,
    is_correct,
    normalise_output,
    parse_response,
)
from grader.quizzes.library import (
    Content,
    count_by_topic_and_type,
    load_content,
    plan_interview,
    prompt_for,
    report_markdown,
    validate_all,
)
from grader.quizzes.loading import ContentError, load_bank, load_prompts, load_template, load_topics
from grader.quizzes.model import (
    FRAMEWORKS,
    TYPES,
    Bank,
    Choice,
    Criterion,
    Draw,
    InterviewTemplate,
    Param,
    PlannedItem,
    Prompt,
    Question,
    SampleAnswer,
    Section,
    Topic,
)

__all__ = [
    "DIFFICULTIES", "FRAMEWORKS", "TYPES", "Bank", "Choice", "Content", "ContentError", "Criterion",
    "Draw",
    "InterviewTemplate", "Param", "PlannedItem", "Prompt", "Question", "ResponseError", "SampleAnswer", "Section",
    "Topic",
    "count_by_topic_and_type", "display", "instantiate", "is_correct", "load_bank", "load_content",
    "load_prompts", "load_template", "load_topics", "normalise_output", "parse_response", "plan_interview",
    "prompt_for", "report_markdown",
    "validate_all",
]
