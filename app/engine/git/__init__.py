"""Git for CI jobs: cached bare mirrors, worktrees, authors, commits, pushes (`repo`), and
CODEOWNERS (`codeowners`), and link-safe file access inside an untrusted checkout (`tree`).
Every call runs `git` as a subprocess; nothing here runs a repository's own code or follows
one of its symlinks."""

from app.engine.git.codeowners import owners_for, parse_codeowners
from app.engine.git.repo import GitError, MirrorCache
from app.engine.git.tree import UnsafePath

__all__ = ["GitError", "MirrorCache", "UnsafePath", "owners_for", "parse_codeowners"]
