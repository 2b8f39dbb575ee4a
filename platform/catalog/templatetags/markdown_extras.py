import markdown as markdown_lib
import nh3
from django import template
from django.utils.safestring import mark_safe

register = template.Library()


@register.filter
def markdown(text: str) -> str:
    """Render exercise markdown; nh3 strips anything an uploaded statement could abuse."""
    html = markdown_lib.markdown(text or "", extensions=["fenced_code", "tables"])
    return mark_safe(nh3.clean(html))


@register.filter
def without_title(text: str) -> str:
    """Markdown less a leading "# Title" line: the page already shows the title as its heading."""
    lines = (text or "").lstrip().split("\n", 1)
    if lines[0].startswith("# "):
        return lines[1] if len(lines) > 1 else ""
    return text


@register.filter
def markdown_inline(text: str) -> str:
    """Markdown for a short text such as a quiz choice: no surrounding paragraph."""
    html = nh3.clean(markdown_lib.markdown(text or ""))
    if html.startswith("<p>") and html.endswith("</p>") and html.count("<p>") == 1:
        html = html[3:-4]
    return mark_safe(html)
