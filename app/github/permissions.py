"""Who may make Scrubbot run someone else's code: a person's role on the repository, asked of GitHub.

The rule (docs/security.md, "Who may command Scrubbot"):

- a `/scrub` command that runs code or changes a run (approve, retry, bisect, minimize, fuzz,
  and any command added later) needs one of `WRITE_ROLES` (admin, maintain, write);
- the issue pipeline's `review` stage runs a repro with a clean security scan without an
  approval when its author has one of `WRITE_ROLES` (or a triager applied the label);
- `/scrub help` only replies, and keeps the collaborator check it always had.

"Is a collaborator" is not the question: a collaborator may hold only `read` or `triage`. The
role comes from `GET /repos/{owner}/{repo}/collaborators/{username}/permission`
(`GitHubPort.permission`), never from a webhook payload. A custom role is not one of
`WRITE_ROLES`. GitHub saying nothing (404, an empty answer) is `none`; an error of any kind is
`UNKNOWN`: both are no permission (fail closed), and neither raises.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger(__name__)

WRITE_ROLES = frozenset({"admin", "maintain", "write"})  # may run code and change runs
UNKNOWN = "unknown"  # GitHub could not be asked: no permission


def role_of(github: Any, repo: str, user: str) -> str:
    """`user`'s role on `repo` (`github` is a `GitHubPort`): admin, maintain, write, triage,
    read, a custom role's name, `none`, or `UNKNOWN` when the question failed."""
    if not user:
        return "none"
    try:
        role = github.permission(repo, user)
    except Exception as exc:  # an API error, no answer, a broken client: fail closed
        log.warning("permission of %s on %s unknown, treated as none: %s", user, repo, exc)
        return UNKNOWN
    return str(role) if role else "none"


def may_write(role: str) -> bool:
    return role in WRITE_ROLES
