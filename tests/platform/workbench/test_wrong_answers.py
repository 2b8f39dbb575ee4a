"""Issue 23: an exercise's mutants as "common wrong answers", with why each fails, shown to a
student once they have solved it (and not before: the near misses would give it away)."""
import shutil

import pytest
from django.conf import settings
from django.test import override_settings
from django.urls import reverse

from catalog.models import Exercise
from catalog.services import content_sync
from tests.platform import classroom as make

pytestmark = pytest.mark.django_db
SHIPPED = settings.CONTENT_DIR / "coding" / "zero-graph-breaks"


@pytest.fixture
def published(tmp_path) -> Exercise:
    """The shipped exercise published the way sync_content publishes it."""
    shutil.copytree(SHIPPED, tmp_path / "coding" / SHIPPED.name)
    content_sync(tmp_path)
    return Exercise.objects.get(uid=SHIPPED.name)


def page(client, exercise: Exercise, language: str = "en") -> str:
    with override_settings(LANGUAGE_CODE=language):
        response = client.get(reverse("submissions:exercise_detail", args=[exercise.slug]),
                              HTTP_ACCEPT_LANGUAGE=language)
    assert response.status_code == 200
    return response.content.decode()


def test_the_editorial_appears_only_after_the_exercise_is_solved(client, published):
    me = make.user()
    client.force_login(me)
    make.graded(me, published, score=0.5)
    assert 'id="wrong-answers"' not in page(client, published)  # tried, not solved: nothing given away
    solved = make.graded(me, published)
    shown = page(client, published)
    assert 'id="wrong-answers"' in shown
    mutants = published.current_version.spec["mutants"]
    assert shown.count('class="wrong-answer"') == len(mutants) == 6
    assert 'id="wrong-keeps_the_print"' in shown and "forces a graph break" in shown
    assert "def model(x, w):" in shown  # the mutant's code, behind "Show the code"
    assert "The issue&#x27;s fake" not in shown  # without the note it opens with, for the authors
    verdict = client.get(reverse("submissions:detail", args=[solved.pk])).content.decode()
    assert 'id="wrong-answers-link"' in verdict and "#wrong-answers" in verdict


def test_the_editorial_speaks_the_readers_language(client, published):
    me = make.user()
    client.force_login(me)
    make.graded(me, published)
    shown = page(client, published, "zh-hans")
    assert "常见错误答案" in shown and "会造成图中断" in shown
    assert "forces a graph break" not in shown


def test_someone_elses_solution_does_not_open_it(client, published):
    make.graded(make.user("other"), published)
    client.force_login(make.user("me"))
    assert 'id="wrong-answers"' not in page(client, published)
