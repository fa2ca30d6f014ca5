"""Git for CI jobs: cached bare mirrors, worktrees, authors, commits, pushes (`repo`), and
CODEOWNERS (`codeowners`). Every call runs `git` as a subprocess; nothing here runs a
repository's own code."""

from app.engine.git.codeowners import owners_for, parse_codeowners
from app.engine.git.repo import GitError, MirrorCache

__all__ = ["GitError", "MirrorCache", "owners_for", "parse_codeowners"]
