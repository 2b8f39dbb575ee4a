"""Every CSV the site writes, through one writer that keeps spreadsheets from running a cell.

A cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is a formula to
Excel, LibreOffice and Google Sheets: a student who signs up as ``=HYPERLINK(...)`` would
otherwise run it on the instructor's machine. Such text cells get a leading ``'`` (OWASP's
advice on CSV injection); numbers are written as numbers.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator, Sequence

from django.http import HttpResponse

from courses.models import Course
from courses.selectors import gradebook

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
Cell = str | int | float


def spreadsheet_safe(value: Cell) -> Cell:
    """A text cell that a spreadsheet would read as a formula, quoted as text."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def csv_response(filename: str, rows: Iterable[Sequence[Cell]]) -> HttpResponse:
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    writer = csv.writer(response)
    for row in rows:
        writer.writerow([spreadsheet_safe(cell) for cell in row])
    return response


def gradebook_rows(course: Course) -> Iterator[Sequence[Cell]]:
    """Canvas's gradebook import form (Student, ID, SIS Login ID, Section, then one column per
    assignment); Moodle and Blackboard map the same columns by email or username."""
    book = gradebook(course)
    yield [
        "Student",
        "ID",
        "SIS Login ID",
        "Email",
        "Section",
        *(f"{item.assignment.title_en}: {item.title} ({item.id})" for item in book.items),
        "Total",
    ]
    yield ["Points Possible", "", "", "", "", *(item.points for item in book.items), book.max_total]
    for row in book.rows:
        student = row.student
        cells: list[Cell] = [
            student.get_full_name() or student.username,
            student.pk,
            student.username,
            student.email,
            course.term,
        ]
        cells += ["" if cell is None or cell.effective is None else f"{cell.effective:g}" for cell in row.cells]
        yield [*cells, f"{row.total:g}"]
