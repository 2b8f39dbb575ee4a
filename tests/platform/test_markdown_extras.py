"""Statements, lessons and questions rendered from Markdown: a line break inside Chinese prose is
no space on the page, and code keeps its lines."""
from catalog.templatetags.markdown_extras import markdown, markdown_inline


def test_a_line_break_between_chinese_characters_leaves_no_space():
    html = markdown("同一个乘积出现在两个公式里。立即执行\n会把它算两遍，\n而 `torch.compile`\n不会。")
    assert "立即执行会把它算两遍，而 <code>torch.compile</code>\n不会。" in html
    assert markdown_inline("展开成 1000 份\nstep，编译很\n慢") == "展开成 1000 份\nstep，编译很慢"


def test_english_prose_and_chinese_in_code_blocks_keep_their_line_breaks():
    assert "runs eagerly\nand" in markdown("It runs eagerly\nand compiles later.")
    html = markdown("正文\n第二行\n\n```text\n形状守卫失败\n再编译一次\n```\n")
    assert "<p>正文第二行</p>" in html and "形状守卫失败\n再编译一次" in html
