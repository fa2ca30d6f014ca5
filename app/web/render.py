"""Untrusted text made into safe HTML: markdown reports, highlighted repros, repro diffs.

Everything here starts from text a stranger wrote (an issue, a repro, what it printed) and
must come out inert:

- markdown goes through markdown-it-py (CommonMark plus tables) with raw HTML off (a `<script>` in a report is shown as
  text), images off (no request leaves the page), and links kept only when they are http(s)
  (or a `#fragment`); other links render as their text. Links get `rel="nofollow noopener
  noreferrer"`.
- code is highlighted by pygments, which escapes its input and emits only `<span class>`.

The results are `markupsafe.Markup` so templates insert them as they are.
"""

from __future__ import annotations

import difflib
from typing import Any
from urllib.parse import urlsplit

from markdown_it import MarkdownIt
from markupsafe import Markup, escape
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import DiffLexer, PythonLexer, TextLexer, get_lexer_by_name
from pygments.util import ClassNotFound

SAFE_SCHEMES = ("http", "https")
CSS_CLASS = "highlight"  # the stylesheet's pygments rules are scoped to it (static/pygments.css)


def safe_link(url: str) -> bool:
    """http(s) URLs with a host, or a fragment on this page; nothing else (javascript:, data:, //)."""
    url = url.strip()
    if url.startswith("#"):
        return True
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme.lower() in SAFE_SCHEMES and bool(parts.netloc)


def _highlight_fence(code: str, language: str, attrs: Any) -> str:
    # Starts with `<pre`, so markdown-it uses it as it is instead of wrapping it again.
    spans = highlight(code, _lexer(language), HtmlFormatter(nowrap=True))
    return f'<pre class="{CSS_CLASS}"><code>{spans}</code></pre>\n'



def _lexer(language: str) -> Any:
    name = (language or "").strip().split()[0].lower() if (language or "").strip() else ""
    if name in ("", "text", "txt", "console", "output"):
        return TextLexer()
    try:
        return get_lexer_by_name(name)
    except ClassNotFound:
        return TextLexer()


def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False, "highlight": _highlight_fence})
    md.enable("table")  # GitHub-flavoured tables: a CI report's failures are one
    md.disable("image")
    md.validateLink = safe_link  # type: ignore[method-assign]

    def link_open(renderer: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        tokens[idx].attrSet("rel", "nofollow noopener noreferrer")
        return renderer.renderToken(tokens, idx, options, env)

    md.add_render_rule("link_open", link_open)
    return md


_MD = _markdown()


def markdown(text: str) -> Markup:
    """A report as HTML. Raw HTML in it is escaped; unsafe links are dropped to their text."""
    return Markup(f'<div class="markdown">{_MD.render(text or "")}</div>')


def python(source: str, *, mark_lines: tuple[int, ...] = ()) -> Markup:
    """A repro, highlighted, with line numbers (`mark_lines`: lines to flag, 1-based)."""
    formatter = HtmlFormatter(cssclass=CSS_CLASS, linenos="table", hl_lines=list(mark_lines), wrapcode=True)
    return Markup(highlight(source or "", PythonLexer(), formatter))


def plain(text: str) -> Markup:
    return Markup(f'<pre class="plain">{escape(text or "")}</pre>')


def unified_diff(before: str, after: str, *, before_name: str = "original.py", after_name: str = "minimized.py") -> str:
    lines = difflib.unified_diff(
        (before or "").splitlines(keepends=True), (after or "").splitlines(keepends=True),
        fromfile=before_name, tofile=after_name,
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def diff(before: str, after: str, **names: str) -> Markup:
    """The change from `before` to `after`, as a highlighted unified diff."""
    text = unified_diff(before, after, **names)
    if not text:
        return Markup('<p class="muted">No difference.</p>')
    return Markup(highlight(text, DiffLexer(), HtmlFormatter(cssclass=f"{CSS_CLASS} diff", wrapcode=True)))


def stylesheet() -> str:
    """The pygments rules, scoped to `.highlight` (written to static/pygments.css)."""
    return HtmlFormatter(style="default").get_style_defs(f".{CSS_CLASS}")
