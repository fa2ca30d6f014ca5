"""A repro that seeds its random generator keeps the seed while it shrinks.

Every benchmark case seeds (`torch.manual_seed(0)`), and so do most reports and every TorchFuzz
program: the failure is then the same on every run. Dropping the seed makes each run draw
afresh, and a failure that needs some draws (an fp16 overflow when |x| > 0.64: ~95% of
draws in rmsnorm_half_assert_close) is accepted on two runs, passes the checks after each
round, and then does not reproduce on its one cold re-check. A flaky minimized repro is also
what a later "is it fixed?" run must not rely on. So the gate refuses a candidate that drops
the program's last seeding call (`seeds`; a pass that builds a program from parts, such as
`hoist_failing_statement`, carries them: `seed_statements`), and `session` tries the result without it at the
end, only for a failure that is an exception rather than a failing check (a shape, an
index, a dtype: not the values the draws give), and only if it still holds then.
"""

from __future__ import annotations

import ast

from app.engine.minimize.parsing import parse
from app.engine.minimize.passes._ast import blocks, dotted, loaded_names

SEEDING = frozenset({"random.seed", "np.random.seed", "numpy.random.seed"})


def _seeding(node: ast.AST) -> bool:
    name = dotted(node.func) if isinstance(node, ast.Call) else None
    return name is not None and (name.rsplit(".", 1)[-1] in ("manual_seed", "manual_seed_all") or name in SEEDING)


def seeds(tree: ast.AST) -> bool:
    """Whether the program seeds: calls `torch.manual_seed` (any `*.manual_seed`,
    `*.manual_seed_all`), `random.seed` or `np.random.seed` where it can run: at module level,
    or in functions whose names the program reads (a `def seed_everything()` nobody calls any
    more seeds nothing)."""
    read = loaded_names(tree) | {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}  # `self.reset()`

    def live(node: ast.AST) -> bool:
        if _seeding(node):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name not in read:
            return False
        return any(live(child) for child in ast.iter_child_nodes(node))

    return live(tree)


def is_seed(statement: ast.stmt) -> bool:
    """`torch.manual_seed(0)` as a statement of its own."""
    return isinstance(statement, ast.Expr) and _seeding(statement.value)


def seed_statements(tree: ast.AST) -> list[ast.stmt]:
    """The program's seeding statements, wherever they stand (`main()`'s first line), the
    outermost one per seeding function, with a literal seed (`torch.manual_seed(args.seed)` ->
    `torch.manual_seed(0)`): what a pass that builds a program from parts puts after the
    imports. Another seed is another draw, but as fixed as the first: the oracle judges the
    program it makes."""
    found: dict[str, ast.stmt] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and is_seed(node):
            call = node.value
            assert isinstance(call, ast.Call)
            literal = all(isinstance(a, ast.Constant) for a in call.args) and not call.keywords
            statement = node if literal else ast.Expr(ast.Call(call.func, [ast.Constant(0)], []))
            found.setdefault(ast.unparse(call.func), statement)
    return list(found.values())


def without_seeds(source: str) -> str | None:
    """`source` without its seeding statements (`torch.manual_seed(0)` on its own line), or
    None if it has none that can go alone."""
    tree = parse(source)
    removed = False
    for body in list(blocks(tree)):
        kept = [s for s in body if not is_seed(s)]
        if len(kept) < len(body):
            body[:] = kept or [ast.Pass()]
            removed = True
    return ast.unparse(tree) + "\n" if removed else None
