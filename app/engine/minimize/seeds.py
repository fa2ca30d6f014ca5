"""A repro that seeds its random generator keeps the seed while it shrinks.

Every benchmark case seeds (`torch.manual_seed(0)`), and so do most reports and every TorchFuzz
program: the failure is then the same on every run. Dropping the seed makes each run draw
afresh, and a failure that needs some draws (an fp16 overflow when |x| > 0.64: ~95% of
draws in rmsnorm_half_assert_close) is accepted on two runs, passes the checks after each
round, and then does not reproduce on its one cold re-check. A flaky minimized repro is also
what a later "is it fixed?" run must not rely on. So the gate refuses a candidate that drops
the program's last seeding call (`seeds`), and `session` tries the result without it at the
end, only for a failure that is an exception rather than a failing check (a shape, an
index, a dtype: not the values the draws give), and only if it still holds then.
"""

from __future__ import annotations

import ast

from app.engine.minimize.parsing import parse
from app.engine.minimize.passes._ast import dotted

SEEDING = frozenset({"random.seed", "np.random.seed", "numpy.random.seed"})


def _seeding(node: ast.AST) -> bool:
    name = dotted(node.func) if isinstance(node, ast.Call) else None
    return name is not None and (name.rsplit(".", 1)[-1] in ("manual_seed", "manual_seed_all") or name in SEEDING)


def seeds(tree: ast.AST) -> bool:
    """Whether the program calls `torch.manual_seed` (any `*.manual_seed`, `*.manual_seed_all`),
    `random.seed` or `np.random.seed` anywhere."""
    return any(_seeding(node) for node in ast.walk(tree))


def without_seeds(source: str) -> str | None:
    """`source` without its seeding statements (`torch.manual_seed(0)` on its own line), or
    None if it has none that can go alone."""
    tree = parse(source)
    removed = False
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                kept = [s for s in body if not (isinstance(s, ast.Expr) and _seeding(s.value))]
                if len(kept) < len(body):
                    body[:] = kept or [ast.Pass()]
                    removed = True
    return ast.unparse(tree) + "\n" if removed else None
