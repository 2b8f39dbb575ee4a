"""Hints (exercise.toml's [[hints]]): shown on the exercise page one at a time, in the reader's
language, each opening recorded; a form sent twice opens nothing more, and none can be skipped."""
import pytest
from django.urls import reverse

from workbench.models import HintReveal

pytestmark = pytest.mark.django_db


@pytest.fixture
def student(client, make_user):
    user = make_user("ada")
    client.force_login(user)
    return user


def reveal(client, exercise, number, **headers):
    return client.post(reverse("workbench:hint_reveal", args=[exercise.slug]), {"number": number}, **headers)


def test_hints_open_one_at_a_time_and_are_recorded(client, exercise, student):
    page = client.get(reverse("submissions:exercise_detail", args=[exercise.slug])).content.decode()
    assert 'id="hints"' in page and "Show a hint (1 of 3)" in page
    assert "topological sort" not in page  # nothing shown before it is asked for

    response = reveal(client, exercise, 1)
    assert response.status_code == 302 and response["Location"].endswith(f"/exercises/{exercise.slug}/#hints")
    page = client.get(reverse("submissions:exercise_detail", args=[exercise.slug])).content.decode()
    assert "is a topological sort" in page and "A cycle is what is left over" not in page
    assert "Show the next hint (2 of 3)" in page

    again = reveal(client, exercise, 1)  # the same form sent twice
    assert again.status_code == 302
    assert list(HintReveal.objects.filter(user=student).values_list("number", flat=True)) == [1]

    box = reveal(client, exercise, 2, HTTP_HX_REQUEST="true").content.decode()
    assert "A cycle is what is left over" in box and "Show the next hint (3 of 3)" in box
    reveal(client, exercise, 3)
    reveals = HintReveal.objects.filter(user=student, exercise=exercise)
    assert [r.number for r in reveals] == [1, 2, 3]
    assert all(r.exercise_version == exercise.current_version and r.revealed_at for r in reveals)
    final = client.get(reverse("submissions:exercise_detail", args=[exercise.slug])).content.decode()
    assert "That was the last hint." in final and 'id="next-hint"' not in final


@pytest.mark.parametrize("number, message", [
    (3, "Hints open one at a time: open hint 1 first."),
    (4, "This exercise has no hint 4."),
    (0, "This exercise has no hint 0."),
    ("two", "Say which hint to open."),
])
def test_a_hint_out_of_turn_is_refused_and_nothing_is_recorded(client, exercise, student, number, message):
    box = reveal(client, exercise, number, HTTP_HX_REQUEST="true")
    assert box.status_code == 200 and message in box.content.decode()
    plain = reveal(client, exercise, number)
    assert plain.status_code == 302
    assert message in client.get(plain["Location"]).content.decode()
    assert not HintReveal.objects.exists()


def test_hints_speak_the_readers_language_and_each_student_has_their_own(client, exercise, student, make_user):
    reveal(client, exercise, 1)
    page = client.get(reverse("submissions:exercise_detail", args=[exercise.slug]),
                      HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "就是拓扑排序" in page and "显示下一条提示" in page and "is a topological sort" not in page
    client.force_login(make_user("bob"))
    page = client.get(reverse("submissions:exercise_detail", args=[exercise.slug])).content.decode()
    assert "is a topological sort" not in page and "Show a hint (1 of 3)" in page


def test_opening_a_hint_needs_a_login_and_a_post(client, exercise, make_user):
    url = reverse("workbench:hint_reveal", args=[exercise.slug])
    assert client.post(url, {"number": 1}).status_code == 302  # to the login page
    client.force_login(make_user("ada"))
    assert client.get(url, {"number": 1}).status_code == 405
    assert not HintReveal.objects.exists()
