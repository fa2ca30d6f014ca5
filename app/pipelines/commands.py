"""`/scrub` words, generated from the run kinds: what a word does, and the help reply.

The webhook router passes the word on as typed (it knows no words); the worker resolves it
here, against every kind that loads, into an action the database layer applies
(`app.domain.CommandAction`, applied by `app.db.commands.apply_command`). A word no kind
declares gets the help reply, made of the kinds' help lines.
"""

from __future__ import annotations

from dataclasses import replace

from app.domain import ActOnLatest, CommandAction, CommandRequest, CreateRun, Lifecycle, RerunFrom, Refuse
from app.pipelines import registry
from app.pipelines.kind import Force, Kind, Start, Word

HELP_HEADER = "Scrubbot commands (they need write permission on this repository):\n\n"


def words() -> dict[str, tuple[Kind, Word]]:
    """Every word the loadable kinds declare, in `RunKind` order (the first declaration wins)."""
    found: dict[str, tuple[Kind, Word]] = {}
    for kind in registry.kinds():
        for word in kind.words:
            found.setdefault(word.word, (kind, word))
    return found


def help_text() -> str:
    return HELP_HEADER + "".join(word.help_line + "\n" for _, word in words().values())


def resolve(request: CommandRequest) -> CommandAction | None:
    """What `request.command` does, or None when no kind declares it (the help reply)."""
    declared = words().get(request.command)
    if declared is None:
        return None
    kind, word = declared
    rule = word.rule
    if isinstance(rule, Start):
        built = rule.build(request)
        return Refuse(built) if isinstance(built, str) else CreateRun(built)
    start = kind.start(request, word.word) if kind.start else None
    if isinstance(rule, Force):
        if start is None:
            raise ValueError(f"kind {kind.name} has a Force word ({word.word}) but no `start`")
        start = replace(start, params={**start.params, rule.flag: True})
        return RerunFrom(kind.name, rule.stage, rule.flag, kind.stage_names, start)
    return ActOnLatest(rule, kind.name, start if rule == Lifecycle.retry else None)
