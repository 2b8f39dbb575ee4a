import re

import markdown as markdown_lib
import nh3
from django import template
from django.utils.safestring import mark_safe

register = template.Library()

# Chinese prose is wrapped at any character in the source, and a browser shows the line break
# between two Chinese characters as a space ("立即执行 会把"); code blocks keep their lines.
_CJK = "\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef"
_CJK_LINE_BREAK = re.compile(f"(?<=[{_CJK}])[ \t]*\n[ \t]*(?=[{_CJK}])")
_PRE = re.compile(r"(<pre\b.*?</pre>)", re.S)


def _join_cjk_lines(html: str) -> str:
    parts = _PRE.split(html)
    return "".join(part if k % 2 else _CJK_LINE_BREAK.sub("", part) for k, part in enumerate(parts))


@register.filter
def markdown(text: str) -> str:
    """Render exercise markdown; nh3 strips anything an uploaded statement could abuse."""
    html = markdown_lib.markdown(text or "", extensions=["fenced_code", "tables"])
    return mark_safe(_join_cjk_lines(nh3.clean(html)))


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
    html = _join_cjk_lines(nh3.clean(markdown_lib.markdown(text or "")))
    if html.startswith("<p>") and html.endswith("</p>") and html.count("<p>") == 1:
        html = html[3:-4]
    return mark_safe(html)
