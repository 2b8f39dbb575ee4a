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
