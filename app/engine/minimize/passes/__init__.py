"""Reduction passes, in the order of the seed's strategies (step 6 of `001_...txt`).

A pass is a small pure function `pass_(tree, index) -> Iterator[list[Edit]]`: it proposes
candidate edit groups for the current tree, most promising first, and never runs anything.
The driver turns each group into a candidate program and sends it through the gate.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from app.engine.minimize.edits import Edit, NodeIndex
from app.engine.minimize.passes.backends import simpler_backends
from app.engine.minimize.passes.calls import (
    drop_keyword_args,
    drop_unused_parameters,
    replace_with_subexpression,
    unpack_to_one_value,
)
from app.engine.minimize.passes.control import (
    strip_try_and_with,
    take_branches,
    unroll_loops,
)
from app.engine.minimize.passes.inline import (
    calls_to_decorators,
    drop_decorators,
    inline_expressions,
    inline_factories,
    inline_functions,
    inline_variables,
    merge_reassignments,
    unwrap_main_guard,
)
from app.engine.minimize.passes.inputs import simple_failing_inputs, simple_loop_inputs
from app.engine.minimize.passes.literals import (
    fold_messages,
    remove_device_dtype,
    shrink_int_literals,
)
from app.engine.minimize.passes.modules import (
    bypass_layers,
    classes_to_functions,
    drop_elements,
    drop_submodules,
)
from app.engine.minimize.passes.narrowing import fold_lengths, narrow_named_loops
from app.engine.minimize.passes.objects import instances_to_names
from app.engine.minimize.passes.setup import (
    inline_argparse_defaults,
    remove_setup,
    remove_unused_imports,
)
from app.engine.minimize.passes.slicing import (
    hoist_failing_statement,
    slice_failing_statement,
)
from app.engine.minimize.passes.statements import (
    cut_after_failure,
    delete_statements,
    drop_definitions,
)

Pass = Callable[[ast.Module, NodeIndex], Iterator[list[Edit]]]

PASSES: tuple[Pass, ...] = (
    # 0. dead code after the failing statement, and what the failing statement does not need
    # (these need the oracle's failing lines)
    cut_after_failure,
    simple_failing_inputs,  # (literal inputs on the failing line first: then the line may stand alone)
    hoist_failing_statement,
    slice_failing_statement,
    narrow_named_loops,  # (the one parameter the message names, not a loop over all)
    # 8 (early: one or two candidates, and every later candidate that stops failing then runs
    # on `eager` instead of compiling with Inductor, the slowest thing a candidate can do)
    simpler_backends,
    # 1. imports and setup
    remove_unused_imports,
    remove_setup,
    inline_argparse_defaults,
    # 2. definitions nobody uses, model layers off the failing path (few candidates, big cuts)
    drop_definitions,
    drop_submodules,
    bypass_layers,
    # 3. a class -> a function: big, and a few candidates (before ddmin sweeps the bodies)
    classes_to_functions,
    instances_to_names,
    # 4 (early: every later candidate computes on smaller tensors)
    shrink_int_literals,
    # 2. statements
    delete_statements,
    # 3. wrappers
    unwrap_main_guard,
    drop_decorators,
    inline_functions,
    inline_expressions,
    inline_factories,
    merge_reassignments,
    calls_to_decorators,
    # 2 (cont.). model containers
    drop_elements,
    # 5. devices, dtypes
    remove_device_dtype,
    # 6. computation: a message computed from names -> what it printed
    fold_messages,
    # 6. computation
    fold_lengths,
    simple_loop_inputs,
    drop_keyword_args,
    drop_unused_parameters,
    replace_with_subexpression,
    unpack_to_one_value,
    # 7. control flow
    unroll_loops,
    take_branches,
    strip_try_and_with,
    # finishing
    inline_variables,
)

# The big cuts: each candidate removes a statement, a definition, a layer or a wrapper. The
# driver runs them alone for a round before the fine passes (one candidate per expression) join.
COARSE_PASSES: frozenset[Pass] = frozenset({
    cut_after_failure, simple_failing_inputs, hoist_failing_statement, slice_failing_statement, narrow_named_loops,
    simpler_backends, remove_unused_imports, remove_setup, inline_argparse_defaults,
    drop_definitions, drop_submodules, bypass_layers, classes_to_functions, instances_to_names, delete_statements, unwrap_main_guard,
    drop_decorators, inline_functions, inline_expressions, inline_factories, merge_reassignments,
    calls_to_decorators,
})

__all__ = [
    "COARSE_PASSES",
    "PASSES",
    "Pass",
    "bypass_layers",
    "calls_to_decorators",
    "classes_to_functions",
    "cut_after_failure",
    "delete_statements",
    "drop_decorators",
    "drop_definitions",
    "drop_elements",
    "drop_keyword_args",
    "drop_submodules",
    "drop_unused_parameters",
    "fold_lengths",
    "fold_messages",
    "hoist_failing_statement",
    "inline_argparse_defaults",
    "inline_expressions",
    "inline_factories",
    "inline_functions",
    "inline_variables",
    "instances_to_names",
    "merge_reassignments",
    "narrow_named_loops",
    "remove_device_dtype",
    "remove_setup",
    "remove_unused_imports",
    "replace_with_subexpression",
    "shrink_int_literals",
    "simple_failing_inputs",
    "simple_loop_inputs",
    "simpler_backends",
    "slice_failing_statement",
    "strip_try_and_with",
    "take_branches",
    "unpack_to_one_value",
    "unroll_loops",
    "unwrap_main_guard",
]
