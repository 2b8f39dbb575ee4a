"""Error pages in the site's look and the reader's language; never Django's debug page."""
import pytest
from django.conf import settings
from django.urls import reverse

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("language", "heading", "nav"), [("en", "Page not found", "Exercises"), ("zh-hans", "页面不存在", "练习")]
)
def test_a_404_has_the_sites_navigation_in_the_readers_language(client, make_user, language, heading, nav):
    client.force_login(make_user())
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = language
    response = client.get("/no/such/page/")
    page = response.content.decode()
    assert response.status_code == 404 and f"<h1>{heading}</h1>" in page
    assert f'href="{reverse("submissions:exercise_list")}">{nav}</a>' in page
    assert "URLconf" not in page and "urlpatterns" not in page


def test_a_student_on_an_instructors_page_gets_the_sites_403(client, make_user):
    client.force_login(make_user())
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    response = client.get(reverse("authoring:upload_list"))
    assert response.status_code == 403 and "<h1>无权访问</h1>" in response.content.decode()


def test_an_api_address_gets_a_json_404():
    from django.test import Client

    response = Client().get("/api/v1/no-such-thing/")
    assert response.status_code == 404 and response.json() == {"detail": "Not found."}


def test_a_form_without_its_csrf_token_gets_the_sites_page():
    from django.test import Client

    response = Client(enforce_csrf_checks=True).post(reverse("login"), {"username": "a", "password": "b"})
    assert response.status_code == 403 and "<h1>The form expired</h1>" in response.content.decode()
