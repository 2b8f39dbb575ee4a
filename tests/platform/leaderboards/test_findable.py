"""Issue 28: boards that people find. A Leaderboards page in the menu with your rank on each
board, and the verdict saying where your best stands and how its speed compares with the
other accepted solutions."""

import pytest
from django.urls import reverse

from leaderboards.selectors import speed_among_accepted
from tests.platform import classroom as make

pytestmark = pytest.mark.django_db


def test_the_menu_leads_to_every_board_with_your_rank(client):
    easy, other = make.exercise("easy-one"), make.exercise("other-one")
    me, rival = make.user("me", pseudonym="Me"), make.user("rival", pseudonym="Rival")
    make.graded(rival, easy, ratio=0.5, interval=(0.45, 0.55))
    make.graded(me, easy, ratio=1.0, interval=(0.95, 1.05))
    client.force_login(me)
    home = client.get(reverse("submissions:exercise_list")).content.decode()
    assert f'href="{reverse("leaderboards:index")}"' in home
    page = client.get(reverse("leaderboards:index")).content.decode()
    rows = page.split("<tbody>")[1].split("</tbody>")[0].split("<tr>")[1:]
    assert len(rows) == 2
    mine = next(r for r in rows if reverse("leaderboards:exercise", args=[easy.slug]) in r)
    assert "<td>2</td>" in mine and "<strong>2</strong>" in mine  # two entries, I am second
    untried = next(r for r in rows if reverse("leaderboards:exercise", args=[other.slug]) in r)
    assert "<td>0</td>" in untried and "<strong>" not in untried


def test_the_exercise_page_links_its_board(client):
    ex = make.exercise()
    client.force_login(make.user())
    page = client.get(reverse("submissions:exercise_detail", args=[ex.slug])).content.decode()
    assert f'href="{reverse("leaderboards:exercise", args=[ex.slug])}" id="board-link"' in page


def test_the_verdict_says_where_your_best_ranks_and_how_fast_you_are(client):
    ex = make.exercise()
    for i, ratio in enumerate((0.5, 0.8, 1.5, 2.0, 3.0)):
        make.graded(make.user(f"other{i}"), ex, ratio=ratio, interval=(ratio * 0.9, ratio * 1.1))
    me = make.user("me")
    mine = make.graded(me, ex, ratio=1.0, interval=(0.97, 1.03))
    client.force_login(me)
    verdict = client.get(reverse("submissions:detail", args=[mine.pk])).content.decode()
    assert f'{reverse("leaderboards:your_rank", args=[ex.slug])}?submission={mine.pk}' in verdict
    line = client.get(reverse("leaderboards:your_rank", args=[ex.slug]), {"submission": mine.pk}).content.decode()
    assert "Faster than <strong>60 %</strong> of the 5 other accepted solutions." in line
    assert "Your best is <strong>3</strong> of 6 on this exercise's leaderboard." in line
    assert line.count('class="bar yours"') == 1


def test_someone_elses_submission_is_not_compared(client):
    ex = make.exercise()
    theirs = make.graded(make.user("them"), ex, ratio=1.0)
    client.force_login(make.user("me"))
    response = client.get(reverse("leaderboards:your_rank", args=[ex.slug]), {"submission": theirs.pk})
    assert response.status_code == 404


def test_a_partial_or_untimed_submission_has_no_speed_spread():
    ex = make.exercise()
    assert speed_among_accepted(make.graded(make.user(), ex, score=0.5)) is None
    assert speed_among_accepted(make.graded(make.user(), ex)) is None  # nothing timed
    first = speed_among_accepted(make.graded(make.user(), ex, ratio=1.0))
    assert first is not None and first.others == 0


def test_after_accepted_the_verdict_offers_the_next_exercise(client):
    solved, following = make.exercise("aa-first"), make.exercise("bb-second")
    me = make.user()
    mine = make.graded(me, solved)
    client.force_login(me)
    page = client.get(reverse("submissions:detail", args=[mine.pk])).content.decode()
    assert f'href="{reverse("submissions:exercise_detail", args=[following.slug])}"' in page
    assert "Next exercise: Exercise bb-second" in page


def test_the_board_shows_your_best_beside_your_latest(client):
    ex = make.exercise()
    me = make.user("me")
    best = make.graded(me, ex, ratio=1.0)
    latest = make.graded(me, ex, score=0.5)
    client.force_login(me)
    page = client.get(reverse("leaderboards:exercise", args=[ex.slug])).content.decode()
    section = page.split('id="best-latest"')[1].split("</section>")[0]
    assert f"#{best.pk}</a> · Accepted · 100%" in section
    assert f"#{latest.pk}</a> · Partly right · 50%" in section
    assert "never lowers your rank" in section
