"""Issue 28, fix 7: analytics that do not mislead. No question is 'weak' on a handful of
answers, verdicts and counts read as words, histogram bars name their range, and the gradebook
writes points as the boards do."""

import pytest
from django.urls import reverse
from django.utils import translation

from courses.analytics import MIN_ANSWERS_TO_JUDGE, QuestionStats, histogram
from courses.templatetags.courses_extras import inline_code, points_text
from tests.platform import classroom as make

pytestmark = pytest.mark.django_db


def test_one_right_answer_is_not_a_weak_question():
    assert not QuestionStats("q", "t", answered=1, difficulty=1.0, discrimination=None).weak
    judged = QuestionStats("q", "t", answered=MIN_ANSWERS_TO_JUDGE, difficulty=1.0, discrimination=None)
    with translation.override("en"):  # whatever language an earlier test left active
        assert judged.weak and judged.weak_because == "almost everyone gets it right"
    fine = QuestionStats("q", "t", answered=20, difficulty=0.6, discrimination=0.5)
    assert not fine.weak and fine.judged


def test_histogram_bars_name_their_range():
    labels = histogram([1.07, 2.0, 11.07], bins=2)["labels"]
    assert labels == ["1.1–6.1", "6.1–11"]


def test_question_text_shows_code_not_backticks():
    assert inline_code("Why does `x.grad` stay <None>?") == "Why does <code>x.grad</code> stay &lt;None&gt;?"
    assert inline_code("an odd ` backtick") == "an odd ` backtick"


def test_the_gradebook_and_the_board_write_points_alike(client):
    written = (points_text(1.6666667), points_text(2.0), points_text(11.666), points_text(0.5))
    assert written == ("1.67", "2", "11.67", "0.5")
    ex = make.exercise()
    student = make.user()
    course = make.course(students=[student])
    make.assignment(course, ex, points=5)
    make.graded(student, ex, score=1 / 3)
    client.force_login(course.memberships.get(role="instructor").user)
    page = client.get(reverse("courses:gradebook", args=[course.pk])).content.decode()
    assert "1.67" in page and "1.66667" not in page
    analytics = client.get(reverse("courses:analytics", args=[course.pk])).content.decode()
    assert "1 submission;" in analytics and "1 submissions" not in analytics
    chart = analytics.split('id="chart-data"')[1]
    assert "Partly right" in chart and "PARTIAL" not in chart


def test_a_course_needs_no_chinese_title_or_term_and_items_are_picked_by_title(client):
    from courses.forms import ItemForm
    from courses.models import Course

    client.force_login(make.user("prof", role="instructor"))
    response = client.post(reverse("courses:create"), {"title_en": "Graphs", "title_zh": "", "term": ""})
    assert response.status_code == 302
    course = Course.objects.get()
    assert (course.title_zh, course.term) == ("Graphs", "")
    ex, other = make.exercise("graph-ex"), make.exercise("other-ex")
    form = ItemForm()
    labels = [label for _, group in form.fields["item"].choices for _, label in group]
    assert "Exercise graph-ex" in labels and "graph-ex" not in labels
    one = ItemForm({"item": f"exercise:{ex.slug}", "points": 5})
    assert one.is_valid() and one.cleaned_data["target"] == ex
    none = ItemForm({"points": 5})
    assert not none.is_valid() and "Pick an exercise" in str(none.errors["item"])
    assert other.pk  # a second exercise to choose from


def test_a_course_quiz_item_starts_that_quiz_and_regrades_ask_first(client, content_dir):
    from quizzes.models import Bank
    from quizzes.services import quiz_content_sync

    assert not quiz_content_sync(content_dir).errors
    bank = Bank.objects.get(uid="autograd-pitfalls")
    course = make.course()
    assignment, _ = make.assignment(course, make.exercise())
    assignment.items.create(kind="quiz", bank=bank, points=10)
    client.force_login(course.memberships.get(role="instructor").user)
    page = client.get(reverse("courses:assignment", args=[course.pk, assignment.pk])).content.decode()
    assert f'action="{reverse("quizzes:start_bank", args=[bank.uid])}"' in page
    assert page.count("return confirm(") == 2  # one regrade for the item, one for the assignment


def test_a_verdicts_back_link_goes_only_to_a_course_page(client):
    ex = make.exercise()
    me = make.user()
    mine = make.graded(me, ex)
    client.force_login(me)
    detail = reverse("submissions:detail", args=[mine.pk])
    for bad in ("https://evil.example/", "//evil.example/courses/", "/admin/"):
        page = client.get(detail, {"back": bad}).content.decode()
        assert bad not in page and f'href="{reverse("submissions:exercise_detail", args=[ex.slug])}" id="back"' in page
