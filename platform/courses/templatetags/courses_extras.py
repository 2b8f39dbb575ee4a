from django import template
from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _

from courses.models import Course
from courses.selectors import Cell, Gradebook, GradebookRow

register = template.Library()


@register.filter
def points_text(value: float) -> str:
    """Points as the boards write them: two decimals at most (1.6667 -> "1.67", 2.0 -> "2")."""
    return f"{value:.2f}".rstrip("0").rstrip(".")


@register.filter
def dict_get(mapping: dict | None, key: object) -> object:
    """``{{ scores|dict_get:item.id }}``: templates cannot index a dict by a variable."""
    return mapping.get(key) if mapping else None


@register.simple_tag
def gradebook_rows(book: Gradebook, course: Course) -> str:
    """The gradebook's rows as HTML, built here rather than by the template engine: a
    500-student course has thousands of cells, and per-cell template logic costs a second."""
    student_url = reverse("courses:student", args=[course.pk, 0]).removesuffix("0/")
    manual, late = escape(_("manual score")), escape(_("late, not counted"))
    memo: dict[Cell | None, str] = {}
    return mark_safe(
        "".join(  # only numbers, escaped names and escaped translations go in
            f'<tr><th><a href="{student_url}{row.student.pk}/">'
            f"{escape(row.student.get_full_name() or row.student.username)}</a></th>"
            f"{_cells(row, manual, late, memo)}<td><strong>{points_text(row.total)}</strong></td></tr>"
            for row in book.rows
        )
    )


def _cells(row: GradebookRow, manual: str, late: str, memo: dict[Cell | None, str]) -> str:
    parts = []
    for cell in row.cells:
        text = memo.get(cell)  # most cells look like many others: each distinct one is built once
        if text is None:
            text = memo[cell] = _cell(cell, manual, late)
        parts.append(text)
    return "".join(parts)


def _cell(cell: Cell | None, manual: str, late: str) -> str:
    if cell is None:
        return "<td>–</td>"
    text = "–" if cell.effective is None else points_text(cell.effective)
    if cell.override_points is not None:
        text = f'<span class="tag" title="{manual}">✎</span>{text}'
    if cell.days_late:
        text += f' <span class="tag late">+{cell.days_late}d</span>'
    if cell.late_refused:
        text += f' <span class="tag late" title="{late}">×{cell.late_refused}</span>'
    return f'<td>{text} <span class="note">({cell.attempts})</span></td>'


@register.filter
def inline_code(text: str) -> str:
    """`code` in a question's text shown as code, not with its backticks (the rest escaped)."""
    parts = str(text).split("`")
    if len(parts) % 2 == 0:  # an unmatched backtick: leave the text as written
        return escape(text)
    return mark_safe("".join(f"<code>{escape(p)}</code>" if i % 2 else escape(p) for i, p in enumerate(parts)))
