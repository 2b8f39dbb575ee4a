"""The pages a student reads, in both languages."""
import re

import pytest
from django.conf import settings
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_pages_need_a_login(client, exercise):
    response = client.get(reverse("submissions:exercise_detail", args=[exercise.slug]))
    assert response.status_code == 302 and response.url.startswith(reverse("login"))


def test_the_exercise_page_shows_the_statement_and_the_starter(client, exercise, make_user):
    client.force_login(make_user())
    version = exercise.current_version
    page = client.get(reverse("submissions:exercise_detail", args=[exercise.slug])).content.decode()
    assert f"<h1>{version.title_en}</h1>" in page
    assert "class StaticGraph" in page  # the starter, in the editor
    assert "<script" not in page.split('<article class="statement card">')[1].split("</article>")[0]


def test_chinese_readers_get_the_interface_and_the_content_in_chinese(client, exercise, make_user):
    client.force_login(make_user())
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    page = client.get(reverse("submissions:exercise_list")).content.decode()
    assert "练习" in page and exercise.current_version.title_zh in page
    assert exercise.current_version.title_en not in page


def test_statement_markdown_cannot_inject_script(client, exercise, make_user):
    version = exercise.current_version
    version.statement_en = "Hello <script>alert(1)</script> <img src=x onerror=alert(2)>"
    version.save()
    client.force_login(make_user())
    page = client.get(reverse("submissions:exercise_detail", args=[exercise.slug])).content.decode()
    statement = page.split('<article class="statement card">')[1].split("</article>")[0]
    assert "Hello" in statement and "<script" not in statement and "onerror" not in statement


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_every_place_in_the_site_menu_has_its_own_name(client, exercise, make_user, language):
    """Lessons and Courses were both 课程 in Chinese: two menu entries a reader could not tell apart."""
    client.force_login(make_user("staffer", role="instructor"))
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = language
    page = client.get(reverse("submissions:exercise_list")).content.decode()
    menu = page.split('<nav aria-label="')[1].split("</nav>")[0]
    names = [name.strip() for name in re.findall(r'<a href="[^"]*">([^<]+)</a>', menu)]
    assert len(names) >= 7 and len(names) == len(set(names)), names
