from django import template
from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _

register = template.Library()


@register.filter
def dict_get(mapping: dict, key):
    """``{{ scores|dict_get:item.id }}``: templates cannot index a dict by a variable."""
    return mapping.get(key) if mapping else None


@register.simple_tag
def gradebook_rows(book, course) -> str:
    """The gradebook's rows as HTML, built here rather than by the template engine: a
    500-student course has thousands of cells, and per-cell template logic costs a second."""
    student_url = reverse("courses:student", args=[course.pk, 0]).removesuffix("0/")
    manual, late = escape(_("manual score")), escape(_("late, not counted"))
    memo: dict = {}
    return mark_safe(
        "".join(  # only numbers, escaped names and escaped translations go in
            f'<tr><th><a href="{student_url}{row.student.pk}/">'
            f"{escape(row.student.get_full_name() or row.student.username)}</a></th>"
            f"{_cells(row, manual, late, memo)}<td><strong>{row.total:g}</strong></td></tr>"
            for row in book.rows
        )
    )


def _cells(row, manual: str, late: str, memo: dict) -> str:
    parts = []
    for cell in row.cells:
        text = memo.get(cell)  # most cells look like many others: each distinct one is built once
        if text is None:
            text = memo[cell] = _cell(cell, manual, late)
        parts.append(text)
    return "".join(parts)


def _cell(cell, manual: str, late: str) -> str:
    if cell is None:
        return "<td>–</td>"
    text = "–" if cell.effective is None else f"{cell.effective:g}"
    if cell.override_points is not None:
        text = f'<span class="tag" title="{manual}">✎</span>{text}'
    if cell.days_late:
        text += f' <span class="tag late">+{cell.days_late}d</span>'
    if cell.late_refused:
        text += f' <span class="tag late" title="{late}">×{cell.late_refused}</span>'
    return f'<td>{text} <span class="note">({cell.attempts})</span></td>'
