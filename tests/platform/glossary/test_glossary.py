"""The glossary page: the content file's terms, in the reader's language with the other beside it."""
import pytest
from django.conf import settings
from django.urls import reverse

from tests.e2e.journeys import log_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def glossary_content(content_dir, settings):
    settings.CONTENT_DIR = content_dir
    return content_dir


def test_english_readers_see_each_term_with_its_chinese_and_the_variants_to_avoid(client, glossary_content):
    page = client.get(reverse("glossary:index")).content.decode()
    assert "<h1>Glossary</h1>" in page
    term = page.split('id="graph-break"')[1].split("</div>")[0]
    assert '<span class="term-name">graph break</span>' in term
    assert '<span class="term-other" lang="zh-Hans">图中断</span>' in term
    assert "<s>" not in term  # nothing is rejected in English for this term


def test_chinese_readers_get_the_chinese_term_first_and_the_rejected_variants(client, glossary_content):
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    page = client.get(reverse("glossary:index")).content.decode()
    assert "<h1>术语表</h1>" in page
    term = page.split('id="eager-execution"')[1].split("</div>")[0]
    assert '<span class="term-name">立即执行</span>' in term and 'lang="en">eager execution</span>' in term
    assert "不用：" in term and "<s>即时执行</s>、<s>即时模式</s>" in term


def test_an_edited_glossary_shows_without_a_restart_and_a_broken_one_leaves_a_note(client, glossary_content):
    path = glossary_content / "glossary.toml"
    client.get(reverse("glossary:index"))
    path.write_text(path.read_text(encoding="utf-8") + '''
[[term]]
id = "bucketing"
en = "bucketing"
zh-hans = "分桶"
definition.en = "Padding inputs up to a few fixed sizes."
definition.zh-hans = "把输入填充到少数几个固定尺寸。"
''', encoding="utf-8")
    assert 'id="bucketing"' in client.get(reverse("glossary:index")).content.decode()
    path.write_text("[[term]]\nid = 3\n", encoding="utf-8")
    response = client.get(reverse("glossary:index"))
    assert response.status_code == 200 and "The glossary has not been written yet." in response.content.decode()


@pytest.mark.browser
def test_the_glossary_reads_on_a_phone(live_server, page, glossary_content, transactional_db):
    log_in(page, live_server.url)
    page.set_viewport_size({"width": 390, "height": 844})
    page.get_by_role("link", name="Glossary").click()
    page.wait_for_selector("#define-by-run")
    assert page.locator("dl.glossary .term").count() >= 20
    # The glossary's own cards fit the screen (the site-wide top bar is not this page's).
    widest = page.evaluate(
        "Math.max(...[...document.querySelectorAll('main *')].map(e => e.getBoundingClientRect().right))")
    assert widest <= 390, f"the glossary is {widest} px wide on a 390 px screen"
