"""Untrusted text to HTML: markdown with raw HTML off and only http(s) links, highlighting, diffs."""

from __future__ import annotations

import pytest

from app.web import render


@pytest.mark.parametrize("url", ["https://github.com/o/r/issues/1", "http://example.org/x?y=1", "#section"])
def test_safe_links_are_http_or_a_fragment(url):
    assert render.safe_link(url)


@pytest.mark.parametrize("url", ["javascript:alert(1)", "JaVaScRiPt:alert(1)", " javascript:x", "data:text/html,<b>",
                                 "vbscript:x", "file:///etc/passwd", "//evil.example/x", "/runs/1", "https:no-host", "mailto:a@b"])
def test_every_other_link_is_refused(url):
    assert not render.safe_link(url)


def test_raw_html_in_a_report_is_shown_as_text():
    html = render.markdown("<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\ntext <b onclick=x>bold</b>")
    assert "<script" not in html and "<img" not in html and "<b " not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "&lt;img src=x onerror=alert(1)&gt;" in html


def test_unsafe_links_lose_their_href_and_safe_ones_get_rel():
    html = render.markdown("[a](javascript:alert(1)) [b](https://x.org/p) <javascript:alert(2)> [c](data:text/html,x)")
    assert html.count("<a ") == 1
    assert '<a href="https://x.org/p" rel="nofollow noopener noreferrer">b</a>' in html
    assert "javascript:" in html  # still there, as text a person can read


def test_images_never_load():
    html = render.markdown("![tracker](https://evil.example/pixel.png)")
    assert "<img" not in html


def test_code_fences_are_highlighted_and_escaped():
    html = render.markdown("```python\nimport torch  # <script>\n```\n\n```nosuchlang\n<b>x</b>\n```")
    assert '<pre class="highlight"><code><span class="kn">import</span>' in html
    assert "&lt;script&gt;" in html and "&lt;b&gt;x&lt;/b&gt;" in html and "<script>" not in html


def test_python_marks_the_lines_asked_for():
    html = render.python("import os\nos.system('x')\nprint(1)\n", mark_lines=(2,))
    assert html.count('class="hll"') == 1
    marked = html.split('class="hll">')[1].split("\n")[0]
    assert "system" in marked and "print" not in marked


def test_diff_shows_removed_and_added_lines():
    text = render.unified_diff("a\nb\nc\n", "a\nc\nd\n")
    assert [line for line in text.splitlines() if line[:1] in "+-" and line[:3] not in ("---", "+++")] == ["-b", "+d"]
    html = render.diff("a\n<b>\n", "a\n")
    assert '<span class="gd">-&lt;b&gt;</span>' in html


def test_no_difference_says_so():
    assert "No difference" in render.diff("same\n", "same\n")


def test_the_shipped_stylesheet_is_the_one_pygments_generates():
    from app.web.templating import HERE

    shipped = (HERE / "static" / "pygments.css").read_text()
    assert render.stylesheet() in shipped


def test_markdown_tables_render_as_tables_with_their_cells_escaped():
    """A CI report's main content is its failures table: it must not come out as a paragraph of pipes."""
    html = render.markdown("| test | error |\n| --- | --- |\n| `test_a` | <script>x</script> |\n| test_b | [l](javascript:y) |\n")
    assert "<table>" in html and "<th>test</th>" in html and "<td><code>test_a</code></td>" in html
    assert "<script" not in html and "&lt;script&gt;" in html
    assert "href=\"javascript" not in html and "| test |" not in html
