"""The pipelines' layout: no import circles inside `app/pipelines/` (import-linter cannot see them).

The kinds' independence and the kit's are import-linter contracts (pyproject.toml); a circle
between two modules of one package is not, so it is found here from the import graph.
"""

from __future__ import annotations

import grimp

PACKAGE = "app.pipelines"


def import_cycles(graph: grimp.ImportGraph, package: str) -> list[list[str]]:
    """Each group of modules of `package` that import one another in a circle (Tarjan's SCCs)."""
    modules = sorted(m for m in graph.modules if m == package or m.startswith(package + "."))
    inside = set(modules)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in sorted(graph.find_modules_directly_imported_by(module) & inside):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1 or module in graph.find_modules_directly_imported_by(module):
                cycles.append(sorted(group))

    for module in modules:
        if module not in index:
            visit(module)
    return cycles


def test_the_cycle_finder_finds_a_circle():
    graph = grimp.ImportGraph()
    for module in ("p", "p.a", "p.b", "p.c", "q"):
        graph.add_module(module)
    graph.add_import(importer="p.a", imported="p.b")
    graph.add_import(importer="p.b", imported="p.a")
    graph.add_import(importer="p.c", imported="p.a")
    graph.add_import(importer="p.c", imported="q")
    assert import_cycles(graph, "p") == [["p.a", "p.b"]]


def test_no_module_of_the_pipelines_imports_itself_back():
    graph = grimp.build_graph("app", cache_dir=None)  # TYPE_CHECKING imports count too
    assert import_cycles(graph, PACKAGE) == []
