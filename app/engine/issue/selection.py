"""Which repro runs: the candidates of a thread, the first choice, and the ones to try next.

Rules (`app/pipelines/issue/README.md`, "Selection rule"):

- Every runnable block of every human post is a candidate (`candidates.post_blocks`);
  blocks the post presents as the expected behaviour or a workaround are `control`s, and
  printed output under an "Output" heading or label is `output`: neither is chosen while a
  `repro` exists (an output block only when nothing else was posted).
- First choice: the original poster's latest post with a repro (its longest self-contained
  block), unless someone with triage permission or higher (`trusted`) posted a strictly shorter
  self-contained one. Nobody else's code replaces the poster's by being shorter: a stranger's
  snippet runs only as an alternate, and replaces the poster's only by showing the reported
  failure when the poster's does not (`alternates`, run by the reproduce stage).
- With no repro from the poster or a triager, the latest self-contained one of anyone's runs;
  it can show the bug, never close the issue (`Repro.trusted` is false).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from app.engine.issue.candidates import CONTROL, OUTPUT, REPRO, post_blocks
from app.engine.issue.repro import Repro
from app.engine.issue.repro_facts import never_runs

Json = dict[str, Any]


def repro_candidates(issue: Json, comments: list[Json]) -> list[Repro]:
    """Every runnable block of the issue and its human comments, in thread order."""
    from app.engine.issue.markdown import _login, human_posts, is_self_contained, with_standard_imports

    op = _login(issue)
    found = []
    for index, post in enumerate(human_posts(issue, comments)):
        for block in post_blocks(post.get("body")):
            source = with_standard_imports(block.source)
            found.append(Repro(
                source=source.rstrip("\n") + "\n",
                author=_login(post),
                url=post.get("html_url", ""),
                created_at=post.get("created_at", ""),
                by_original_poster=_login(post) == op,
                # a script that never calls anything (a pasted model, a graph dump) shows nothing
                self_contained=is_self_contained(source) and not never_runs(source),
                kind=block.kind,
                role=block.role,
                where="the issue body" if index == 0 else f"comment {index}",
                line=block.line,
                trusted=_login(post) == op,
                why=block.why,
                verbatim=block.kind != "method",  # a test method runs inside a harness Scrubbot wrote
            ))
    return found


def _mark(candidates: list[Repro], trusted: set[str] | frozenset[str]) -> list[Repro]:
    return [replace(c, trusted=c.by_original_poster or c.author in trusted) for c in candidates]


def select_repro(candidates: list[Repro], trusted: set[str] | frozenset[str] = frozenset()) -> Repro | None:
    """The repro to run first (see the module docstring); `trusted`: the commenters with
    triage permission or higher. `candidates` are in thread order, which breaks ties."""
    marked = _mark(candidates, trusted)
    pool = ([c for c in marked if c.role == REPRO] or [c for c in marked if c.role != OUTPUT]) or marked
    if not pool:
        return None
    order = {id(c): i for i, c in enumerate(pool)}
    latest = lambda c: (c.created_at, order[id(c)])  # noqa: E731
    by_op = [c for c in pool if c.by_original_poster]
    if not by_op:
        helpers = [c for c in pool if c.trusted]
        group = [c for c in helpers if c.self_contained] or helpers or [c for c in pool if c.self_contained] or pool
        chosen = max(group, key=latest)
        who = "a triager" if chosen.trusted else "a commenter (it cannot close the issue)"
        return _why(chosen, f"the latest repro, by {who}; the original poster posted none")
    ready = [c for c in by_op if c.self_contained] or by_op
    post = max(ready, key=latest).url
    chosen = max((c for c in ready if c.url == post), key=lambda c: (c.lines, -order[id(c)]))
    shorter = [c for c in pool if c.trusted and not c.by_original_poster and c.self_contained and c.lines < chosen.lines]
    if shorter:
        best = min(shorter, key=lambda c: (c.lines, order[id(c)]))
        return _why(best, f"a shorter self-contained repro by a triager ({best.lines} lines against the poster's {chosen.lines})")
    return _why(chosen, "the original poster's latest repro" + (" (a control block: no other code was posted)"
                                                                 if chosen.role == CONTROL else ""))


def _why(repro: Repro, why: str) -> Repro:
    return replace(repro, why=why)


def alternates(candidates: list[Repro], chosen: Repro | None, trusted: set[str] | frozenset[str] = frozenset(),
               limit: int = 4) -> list[Repro]:
    """The other repro blocks to try when the chosen one does not show the reported failure:
    the poster's, then triagers', then anyone's; latest first; controls never."""
    marked = [c for c in _mark(candidates, trusted) if c.role == REPRO and c.self_contained]
    seen = {chosen.source.strip()} if chosen else set()
    ranked = sorted(enumerate(marked), key=lambda item: (not item[1].by_original_poster, not item[1].trusted,
                                                         -item[0]))
    found = []
    for _, candidate in ranked:
        if candidate.source.strip() in seen:
            continue
        seen.add(candidate.source.strip())
        found.append(candidate)
    return found[:limit]


__all__ = ["alternates", "repro_candidates", "select_repro"]
