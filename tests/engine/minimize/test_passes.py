"""Each pass alone, on tiny programs, with a plain predicate: `shrink(src, pred, [pass]) == ...`."""

from __future__ import annotations

import ast

from app.engine.minimize import shrink
from app.engine.minimize.edits import NodeIndex, apply_edits
from app.engine.minimize.passes import (
    bypass_layers,
    calls_to_decorators,
    classes_to_functions,
    delete_statements,
    drop_decorators,
    drop_definitions,
    drop_elements,
    drop_keyword_args,
    drop_submodules,
    drop_unused_parameters,
    fold_messages,
    hoist_failing_statement,
    inline_argparse_defaults,
    inline_expressions,
    inline_factories,
    inline_functions,
    inline_variables,
    merge_reassignments,
    remove_device_dtype,
    remove_setup,
    remove_unused_imports,
    replace_with_subexpression,
    shrink_int_literals,
    simple_failing_inputs,
    simple_loop_inputs,
    simpler_backends,
    slice_failing_statement,
    strip_try_and_with,
    take_branches,
    unpack_to_one_value,
    unroll_loops,
    unwrap_main_guard,
)
from app.engine.minimize.passes.inputs import SIMPLE_INPUTS, dead_statements


def canon(source: str) -> str:
    return ast.unparse(ast.parse(source))


def has(*needles: str):
    """Interesting while every needle is still in the (canonical) source."""
    return lambda source: all(n in source for n in needles)


def test_unused_imports_go_used_ones_stay():
    src = "import os, sys\nimport torch\nfrom math import pi, tau\nprint(sys.argv, tau)"
    assert shrink(src, has("print"), [remove_unused_imports]) == canon(
        "import sys\nfrom math import tau\nprint(sys.argv, tau)")


def test_setup_statements_go_all_at_once():
    src = """
import torch, logging, os
logging.basicConfig(level=logging.INFO)
logger = logging.getLogger(__name__)
os.environ["X"] = "1"
torch.manual_seed(0)
print("starting")
y = torch.ones(2)
logger.info("done %s", y)
"""
    calls = []
    result = shrink(src, lambda s: calls.append(s) or "torch.ones" in s, [remove_setup])
    assert result == canon("import torch, logging, os\ny = torch.ones(2)")
    assert len(calls) == 2  # the original, then every setup statement in one candidate


def test_setup_statement_the_bug_needs_is_kept():
    src = "import torch\ntorch.manual_seed(0)\nprint(1)\nx = 1"
    assert shrink(src, has("manual_seed"), [remove_setup]) == canon("import torch\ntorch.manual_seed(0)\nx = 1")


def test_argparse_defaults_replace_args_attributes():
    src = """
import argparse
p = argparse.ArgumentParser()
p.add_argument("--batch-size", type=int, default=64)
p.add_argument("--amp", action="store_true")
args = p.parse_args()
run(args.batch_size, args.amp)
"""
    result = shrink(src, has("run("), [inline_argparse_defaults])
    assert "run(64, False)" in result


def test_delete_statements_keeps_only_what_the_predicate_needs():
    src = "a = 1\nb = 2\ndef f():\n    c = 3\n    d = 4\n    return c\ne = 5"
    assert shrink(src, has("d = 4"), [delete_statements]) == canon("def f():\n    d = 4")


def test_delete_statements_empties_a_block_to_pass():
    src = "if x:\n    a = 1\n    b = 2\nc = 3"
    assert shrink(src, has("if x"), [delete_statements]) == canon("if x:\n    pass")


def test_drop_definitions_removes_a_name_with_every_use():
    src = "opt = make()\nx = 1\nopt.zero_grad()\nfor i in y:\n    opt.step()\nboom(x)"

    def pred(s):  # a NameError is "another bug": uses without the definition are rejected
        return "boom(x)" in s and ("opt." not in s or "opt = make()" in s)

    assert shrink(src, pred, [drop_definitions]) == canon("x = 1\nfor i in y:\n    pass\nboom(x)")


def test_drop_submodules_removes_layer_and_its_uses():
    src = """
class M(nn.Module):
    def __init__(self):
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 8)
    def forward(self, x):
        x = self.a(x)
        return self.b(x)
"""
    result = shrink(src, has("self.b"), [drop_submodules])
    assert "self.a" not in result and "self.b = nn.Linear(4, 8)" in result


def test_drop_elements_shrinks_sequential_and_lists():
    src = "m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.1), nn.Linear(8, 2))\nxs = [1, 2, 3]"
    assert shrink(src, has("Linear(8, 2)", "xs"), [drop_elements]) == canon(
        "m = nn.Sequential(nn.Linear(8, 2))\nxs = []")


def test_decorators_go_unless_the_bug_needs_them():
    src = "@torch.no_grad()\n@torch.compile(fullgraph=True)\ndef f(x):\n    return x.item()"
    assert shrink(src, has("fullgraph"), [drop_decorators]) == canon(
        "@torch.compile(fullgraph=True)\ndef f(x):\n    return x.item()")


def test_loop_over_a_list_display_binds_its_first_element():
    src = "for block in [make(1), make(2)]:\n    x = block(x)"
    assert shrink(src, has("block(x)", "make(1)"), [unroll_loops]) == canon("block = make(1)\nx = block(x)")


def test_unwrap_main_guard():
    src = "def main():\n    go()\nif __name__ == '__main__':\n    main()"
    assert shrink(src, has("main()"), [unwrap_main_guard]) == canon("def main():\n    go()\nmain()")


def test_inline_function_called_once():
    src = "def train(model, steps=3):\n    out = model(steps)\n    return out\nresult = train(net)"
    assert shrink(src, has("model(steps)"), [inline_functions]) == canon(
        "model = net\nsteps = 3\nout = model(steps)\nresult = out")


def test_inline_function_leaves_early_returns_alone():
    src = "def f(a):\n    if a:\n        return 1\n    return 2\nx = f(0)"
    assert shrink(src, lambda s: True, [inline_functions]) == canon(src)


def test_inline_function_returning_a_call_result():
    src = "def forward(x):\n    y = norm(x)\n    return act(y)\ndef run(x):\n    return forward(x)"
    assert shrink(src, has("act(y)"), [inline_functions]) == canon(
        "def run(x):\n    x = x\n    y = norm(x)\n    return act(y)")


def test_inline_expression_function_inside_an_expression():
    src = "def fused(x, w, eps=1e-5):\n    'doc'\n    return x.var() + eps\nassert close(fused(a, b), ref(a))"
    assert shrink(src, has("var"), [inline_expressions]) == canon("assert close(a.var() + 1e-5, ref(a))")


def test_inline_expression_factory_called_inside_an_expression():
    # a module made a function (classes_to_functions) whose call sits in a check: `F(a)(b)`
    src = ("def Reference(dim):\n    def forward(x):\n        return nn.LayerNorm(dim)(x)\n    return forward\n"
           "assert close(x.var(), Reference(2)(x))")
    assert shrink(src, has("LayerNorm"), [inline_expressions]) == canon("assert close(x.var(), nn.LayerNorm(2)(x))")


def test_inline_expression_factory_keeps_the_inner_parameter_over_the_outer():
    src = "def F(x):\n    def g(x):\n        return x + 1\n    return g\ny = F(a)(b)"
    assert shrink(src, lambda s: True, [inline_expressions]) == canon("y = b + 1")


def test_inline_expression_function_needs_every_parameter_bound():
    src = "def f(x, y):\n    return x + y\nz = f(1)"
    assert shrink(src, lambda s: True, [inline_expressions]) == canon(src)


def test_unused_parameters_go_with_their_arguments_at_every_call():
    src = ("def gen(model, idx, steps, temperature=1.0):\n    return model(idx)\n"
           "a = gen(m, i, 3, temperature=0.5)\nb = gen(m, j, 4)\n"
           "class Block:\n    def __init__(self, dim, heads):\n        self.dim = dim\nblk = Block(8, heads=2)")
    assert shrink(src, has("model(idx)", "self.dim = dim"), [drop_unused_parameters]) == canon(
        "def gen(model, idx):\n    return model(idx)\na = gen(m, i)\nb = gen(m, j)\n"
        "class Block:\n    def __init__(self, dim):\n        self.dim = dim\nblk = Block(8)")


def test_unused_parameter_needed_by_the_bug_stays():
    src = "def f(a, b):\n    return a\nf(1, crash())"
    assert shrink(src, has("crash()"), [drop_unused_parameters]) == canon(src)


def test_int_literals_shrink_together_to_small_values():
    src = "w = nn.Linear(128, 64)\nx = torch.randn(32, 128)"

    def pred(s):  # the two 128s must agree, and 64 must stay bigger than 2
        tree = ast.parse(s)
        ints = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)]
        return ints[0] == ints[3] and ints[1] > 2

    assert shrink(src, pred, [shrink_int_literals]) == canon("w = nn.Linear(1, 4)\nx = torch.randn(1, 1)")


def test_device_and_dtype_requirements_go():
    src = "x = torch.ones(2, device='cuda', dtype=torch.float16).cuda()\ny = x.to(dev).half()"
    assert shrink(src, has("torch.ones", "y"), [remove_device_dtype]) == canon("x = torch.ones(2)\ny = x")


def test_keyword_args_dropped_unless_needed():
    src = "f(a, lr=0.1, momentum=0.9, fullgraph=True)"
    assert shrink(src, has("fullgraph"), [drop_keyword_args]) == canon("f(a, fullgraph=True)")


def test_replace_with_subexpression_unwraps_calls_and_operators():
    src = "y = relu(dropout(x) + bias)"
    assert shrink(src, has("x"), [replace_with_subexpression]) == canon("y = x")


def test_replace_with_subexpression_unwraps_comprehensions_and_literal_indexing():
    src = "for b in [Block(d) for _ in range(depth)]:\n    y = b(x)\nz = [p, q][1]"
    assert shrink(src, has("Block(d)", "b(x)", "q"), [replace_with_subexpression]) == canon(
        "for b in [Block(d)]:\n    y = b(x)\nz = q")


def test_loops_run_once():
    src = "for i in range(10):\n    step(i)\n    if done:\n        break\nwhile True:\n    go()\n    break"
    def pred(s):  # `i` must stay bound
        return "step(i)" in s and "go()" in s and ("i = 0" in s or "for i" in s)

    assert shrink(src, pred, [unroll_loops]) == canon(
        "i = 0\nstep(i)\nif done:\n    pass\ngo()")


def test_loop_body_alone_when_variable_unused():
    src = "for batch in loader:\n    step()"
    assert shrink(src, has("step()"), [unroll_loops]) == canon("step()")


def test_branches_taken():
    src = "if cuda:\n    a()\nelse:\n    b()\nif flag:\n    c()"
    assert shrink(src, has("b()", "c()"), [take_branches]) == canon("b()\nc()")


def test_try_and_with_become_their_bodies():
    src = "try:\n    run()\nexcept Exception as e:\n    print(e)\nwith torch.no_grad():\n    go()"
    assert shrink(src, has("run()", "go()"), [strip_try_and_with]) == canon("run()\ngo()")


def test_simpler_backends_prefers_eager():
    src = "f = torch.compile(g, fullgraph=True)\n@torch.compile\ndef h():\n    pass"
    assert shrink(src, has("fullgraph"), [simpler_backends]) == canon(
        "f = torch.compile(g, fullgraph=True, backend='eager')\n"
        "@torch.compile(backend='eager')\ndef h():\n    pass")


def test_an_unpacked_display_is_inlined_name_by_name():
    src = "dim, seq = (1, 2)\nmodel = Pool(dim)\nout = model(torch.randn(seq))"
    assert shrink(src, has("Pool(", "randn("), [inline_variables]) == canon("out = Pool(1)(torch.randn(2))")
    swap = "a, b = (b, a)\nprint(a, b)"  # a value reads a target: not the same program split
    assert shrink(swap, has("print(a, b)"), [inline_variables]) == canon(swap)


def test_a_class_whose_one_attribute_is_read_becomes_a_function_returning_it():
    src = ("class Block:\n    def __init__(self, k):\n        def forward(x):\n            return x * k\n"
           "        self.ln1 = forward\n        self.unused = 1\nassert Block(2).ln1(3) == 7, 'v'\n")

    def fails(source: str) -> bool:
        try:
            exec(source, {})
        except AssertionError as error:
            return str(error) == "v"
        except Exception:
            return False
        return False

    result = shrink(src, fails, [classes_to_functions])
    assert "class" not in result and "Block(2)(3)" in result and fails(result)
    two = src.replace("assert Block(2).ln1(3)", "b = Block(2)\nassert b.ln1(3) + Block(1).unused")
    assert shrink(two, lambda s: "class" in s or "Block" not in s, [classes_to_functions]) == canon(two)


def test_backend_specific_bug_keeps_inductor():
    src = "f = torch.compile(g)"
    assert shrink(src, lambda s: "backend" not in s, [simpler_backends]) == canon(src)


def test_inline_single_use_variable():
    src = "x = torch.randn(4)\ny = f(x)\nz = y + y"
    assert shrink(src, has("f(", "randn"), [inline_variables]) == canon("y = f(torch.randn(4))\nz = y + y")


def test_module_class_becomes_a_factory_function():
    src = """
class M(nn.Module):
    '''doc'''
    def __init__(self, d):
        super().__init__()
        self.lin = nn.Linear(d, d)
    def forward(self, x):
        return self.lin(x)
y = M(4)(x)
"""
    assert shrink(src, has("nn.Linear(d, d)", "M(4)(x)"), [classes_to_functions]) == canon("""
def M(d):
    lin = nn.Linear(d, d)
    def forward(x):
        return lin(x)
    return forward
y = M(4)(x)
""")


def test_class_using_bare_self_is_left_alone():
    src = "class M(nn.Module):\n    def forward(self, x):\n        return helper(self, x)"
    assert shrink(src, lambda s: True, [classes_to_functions]) == canon(src)


def test_failing_call_gets_a_simple_input_and_its_pipeline_goes():
    src = "import torch\nvocab = build(corpus)\nids = encode(vocab, text)\nemb(ids)\n"
    tree = ast.parse(canon(src))
    index = NodeIndex(tree, failing_lines=(4,))
    candidates = [ast.unparse(apply_edits(tree, group)) for group in simple_failing_inputs(tree, index)]
    assert candidates[0] == "import torch\nemb(torch.tensor([1]))"
    assert len(candidates) == len(SIMPLE_INPUTS)


def test_both_operands_of_a_failing_binary_op_get_simple_inputs():
    src = "import torch\nh = conv(x)\nout = block(h)\ny = out + h\n"
    tree = ast.parse(canon(src))
    index = NodeIndex(tree, failing_lines=(4,))
    candidates = {ast.unparse(apply_edits(tree, group)) for group in simple_failing_inputs(tree, index)}
    assert "import torch\nh = conv(x)\ny = torch.ones(2) + h" in candidates  # `block(h)` went with `out`
    assert "import torch\nh = conv(x)\nout = block(h)\ny = out + torch.ones(1, dtype=torch.float64)" in candidates


def test_dead_statements_are_found_transitively_and_side_effects_stay():
    tree = ast.parse("a = f()\nb = g(a)\nprint(a)\nc = h(b)\nuse(c)")
    use = tree.body[-1].value.args[0]
    assert [ast.unparse(s) for s in dead_statements(tree, [use])] == ["c = h(b)", "b = g(a)"]


def test_failing_input_from_a_loader_loop_replaces_the_loop():
    src = "import torch\ndata = load()\nfor ids, labels in batches(data):\n    emb(ids)\n"
    tree = ast.parse(canon(src))
    index = NodeIndex(tree, failing_lines=(4,))
    first = next(iter(simple_failing_inputs(tree, index)))
    assert ast.unparse(apply_edits(tree, first)) == "import torch\nemb(torch.tensor([1]))"


def test_unread_results_are_not_dead_code():
    tree = ast.parse("x = load()\nout = model(x)")
    assert [ast.unparse(s) for s in dead_statements(tree, [tree.body[1].value.args[0]])] == ["x = load()"]


def test_factory_called_once_is_inlined():
    src = """
def M(d):
    lin = nn.Linear(d, d)
    def forward(x):
        return lin(x)
    return forward
y = M(4)(inp)
"""
    assert shrink(src, has("nn.Linear(d, d)"), [inline_factories]) == canon(
        "d = 4\nlin = nn.Linear(d, d)\nx = inp\ny = lin(x)")


def test_data_loop_becomes_its_body_on_a_simple_input():
    src = "import torch\nds = make_data(64)\nfor step, (images, labels) in enumerate(ds):\n    x = images\n    model(x)\n"
    result = shrink(src, has("model(x)"), [simple_loop_inputs])
    assert result == canon("import torch\nx = torch.tensor([1])\nmodel(x)")


def test_a_message_made_from_names_becomes_what_it_printed():
    src = ("import torch\nfor name, p in [('value.weight', 1)]:\n"
           "    assert p > 2, f'non-finite gradient in {name} ({p} of {len(name)})'\n")
    tree = ast.parse(src)
    index = NodeIndex(tree, failing_lines=(3,), failing_message="non-finite gradient in value.weight (1 of 12)")
    [edits] = list(fold_messages(tree, index))
    folded = ast.unparse(apply_edits(tree, edits, index))
    # the name folded; the numbers (a count, a length) still computed
    assert "f'non-finite gradient in value.weight ({p} of {len(name)})'" in folded
    other = NodeIndex(tree, failing_lines=(3,), failing_message="something else")
    assert list(fold_messages(tree, other)) == []


def test_a_reassignment_reading_the_first_binding_merges_with_it():
    src = "model = forward\nmodel = torch.compile(model, fullgraph=True)\nmodel(1)\n"
    assert shrink(src, has("forward", "fullgraph", "model(1)"), [merge_reassignments]) == canon(
        "model = torch.compile(forward, fullgraph=True)\nmodel(1)")


def test_a_wrapped_function_becomes_a_decorated_one():
    src = "def forward(x):\n    return x.item()\nmodel = torch.compile(forward, fullgraph=True)\nmodel(1)\n"
    assert shrink(src, has("fullgraph=True", "model(1)"), [calls_to_decorators]) == canon(
        "@torch.compile(fullgraph=True)\ndef model(x):\n    return x.item()\nmodel(1)")
    used_twice = src + "forward(2)\n"
    assert shrink(used_twice, has("fullgraph=True"), [calls_to_decorators]) == canon(used_twice)


def test_a_same_named_local_is_another_variable_for_inlining():
    src = ("def outer(idx):\n    x = tok(idx)\n    def forward(x):\n        return x.item()\n    x = forward(x)\n"
           "forward = outer\nidx = torch.ones(1)\nforward(idx)\n")
    result = shrink(src, has("item()", "tok(", "forward("), [inline_functions, inline_variables])
    assert "def forward" not in result and "idx = torch.ones(1)" not in result, result


def _first_candidate(pass_, src: str, failing_lines: tuple[int, ...]) -> str:
    tree = ast.parse(src)
    index = NodeIndex(tree, failing_lines=failing_lines)
    return ast.unparse(apply_edits(tree, next(iter(pass_(tree, index))), index))


def test_the_failing_statement_alone_is_tried_first():
    src = ("import torch\nimport os\ndef block(x):\n    y = torch.ones(3)\n    return torch.ones(2) + torch.ones(4)\n"
           "out = block(torch.ones(1))\nprint(out)\n")
    assert _first_candidate(hoist_failing_statement, src, (6, 5)) == canon(
        "import torch\nimport os\ntorch.ones(2) + torch.ones(4)")


def test_a_failing_statement_inside_a_compiled_program_is_also_hoisted_into_a_compiled_function():
    # a graph break happens only while Dynamo traces: hoisted to module level the line just runs
    src = ("import torch\nimport os\nclass Block(torch.nn.Module):\n    def forward(self, h):\n"
           "        if torch.ones(1).item() > 100.0:\n            h = h.clamp(0, 1)\n        return h\n"
           "model = torch.compile(Block(), fullgraph=True, dynamic=False)\nmodel(torch.ones(2))\n")
    tree = ast.parse(src)
    index = NodeIndex(tree, failing_lines=(9, 5))
    plain, compiled, *outer = (ast.unparse(apply_edits(tree, g, index)) for g in hoist_failing_statement(tree, index))
    assert plain == canon("import torch\nimport os\nif torch.ones(1).item() > 100.0:\n    pass")
    assert compiled == canon("import torch\nimport os\n@torch.compile(fullgraph=True, dynamic=False)\ndef f():\n"
                             "    if torch.ones(1).item() > 100.0:\n        pass\nf()")
    assert outer == [canon("import torch\nimport os\nmodel(torch.ones(2))")]  # module level: not compiled


def test_the_hoisted_statement_keeps_the_programs_seed():
    # the gate keeps a seeded program seeded: a hoist without the seed would never be asked
    src = ("import torch\ndef main():\n    torch.manual_seed(0)\n    x = torch.randn(3)\n"
           "    return x[torch.randn(2).argmax() + 5]\nmain()\n")
    assert _first_candidate(hoist_failing_statement, src, (6, 5)) == canon(
        "import torch\ntorch.manual_seed(0)\nx[torch.randn(2).argmax() + 5]")
    sliced = "import torch\ntorch.manual_seed(0)\nunused = 1\nx = torch.randn(3)\nx[5]\n"
    assert _first_candidate(slice_failing_statement, sliced, (5,)) == canon(
        "import torch\ntorch.manual_seed(0)\nx = torch.randn(3)\nx[5]")


def test_a_seed_carried_from_a_function_does_not_make_the_program_look_hoisted_already():
    # imports + `def main` + the statement is not the hoisted program (imports, seed, statement)
    src = "import torch\ndef main():\n    torch.manual_seed(0)\ntorch.randn(2)[5]\n"
    assert _first_candidate(hoist_failing_statement, src, (4,)) == canon(
        "import torch\ntorch.manual_seed(0)\ntorch.randn(2)[5]")
    hoisted = "import torch\ntorch.manual_seed(0)\ntorch.randn(2)[5]\n"
    tree = ast.parse(hoisted)
    assert list(hoist_failing_statement(tree, NodeIndex(tree, failing_lines=(3,)))) == []


def test_no_compiled_hoist_without_a_compile_nor_for_a_module_level_statement():
    eager = "import torch\ndef g(x):\n    return x.item()\ng(torch.ones(2))\n"
    tree = ast.parse(eager)
    index = NodeIndex(tree, failing_lines=(4, 3))
    assert [ast.unparse(apply_edits(tree, g, index)) for g in hoist_failing_statement(tree, index)] == [
        canon("import torch\nx.item()"), canon("import torch\ng(torch.ones(2))")]
    module_level = "import torch\nx = torch.compile(lambda t: t)(torch.ones(1))\nx.item(1)\n"
    tree = ast.parse(module_level)
    index = NodeIndex(tree, failing_lines=(3,))
    assert [ast.unparse(apply_edits(tree, g, index)) for g in hoist_failing_statement(tree, index)] == [
        canon("import torch\nx.item(1)")]


def test_a_module_level_failing_statement_keeps_its_backward_slice():
    src = ("import torch\nlayers = []\nunused = torch.ones(5)\nlayers.append(torch.nn.Linear(1, 1))\n"
           "width = 8\nmodel = torch.nn.Sequential(*layers)\nmodel(torch.ones(1, dtype=torch.float64))\nprint(width)\n")
    assert _first_candidate(slice_failing_statement, src, (7,)) == canon(
        "import torch\nlayers = []\nlayers.append(torch.nn.Linear(1, 1))\nmodel = torch.nn.Sequential(*layers)\n"
        "model(torch.ones(1, dtype=torch.float64))")


def test_a_comprehension_over_a_display_becomes_the_display():
    src = "q, k, v = [t.reshape(shape).transpose(1, 2) for t in (a, b, c)]\nuse(q, k, v)"
    assert shrink(src, has("use(q, k, v)", "a, b, c"), [replace_with_subexpression]) == canon(
        "q, k, v = (a, b, c)\nuse(q, k, v)")


def test_the_receiver_of_a_failing_method_call_gets_a_simple_input():
    src = ("import torch\ntok = torch.nn.Embedding(1, 1)\ndef model(idx):\n    if tok(idx).item() > 100.0:\n        pass\n"
           "model(torch.tensor([1]))\n")
    tree = ast.parse(src)
    index = NodeIndex(tree, failing_lines=(6, 4))
    texts = [ast.unparse(apply_edits(tree, edits, index)) for edits in simple_failing_inputs(tree, index)]
    assert any("if torch.ones(1).item() > 100.0" in t and "tok =" not in t for t in texts)
    assert not any("torch.tensor([1]).nn" in t for t in texts)  # `torch` itself is no operand


def test_an_unpacking_may_become_one_value_for_every_target():
    src = "q, k, v = proj(x).chunk(3)\nout = attend(q, k, v)"
    assert shrink(src, has("attend(q, k, v)"), [unpack_to_one_value]) == canon("q = k = v = proj\nout = attend(q, k, v)")
    assert shrink(src, has("attend(q, k, v)", "x"), [unpack_to_one_value]) == canon("q = k = v = x\nout = attend(q, k, v)")


def test_a_failing_operand_inside_a_function_may_become_its_input():
    src = ("import torch\ntok = torch.nn.Embedding(1, 1)\n@torch.compile(fullgraph=True)\ndef model(idx):\n"
           "    if tok(idx).item() > 100.0:\n        pass\nmodel(torch.tensor([1]))\n")
    tree = ast.parse(src)
    index = NodeIndex(tree, failing_lines=(7, 5))
    texts = [ast.unparse(apply_edits(tree, edits, index)) for edits in simple_failing_inputs(tree, index)]
    assert canon("import torch\n@torch.compile(fullgraph=True)\ndef model(idx):\n    if idx.item() > 100.0:\n"
                 "        pass\nmodel(torch.ones(1))\n") in texts


def test_a_layer_called_in_the_middle_of_an_expression_is_skipped_whole():
    src = ("class Pool(nn.Module):\n    def __init__(self, d):\n        super().__init__()\n"
           "        self.key = nn.Linear(d, d)\n        self.value = nn.Linear(d, d)\n"
           "    def forward(self, x):\n        return softmax(self.key(x)) * self.value(x)\n"
           "tok = nn.Embedding(4, 2)\nout = Pool(2)(tok(idx))\n")
    result = shrink(src, has("softmax(", "self.value(x)"), [bypass_layers])
    assert result == canon("class Pool(nn.Module):\n    def __init__(self, d):\n        super().__init__()\n"
                           "        self.value = nn.Linear(d, d)\n    def forward(self, x):\n"
                           "        return softmax(x) * self.value(x)\nout = Pool(2)(idx)\n")


def test_an_attribute_that_is_not_a_constructed_layer_is_not_bypassed():
    src = "class Fused(nn.Module):\n    def __init__(self, ref):\n        self.eps = ref.eps\n    def forward(self, x):\n        return self.eps(x)\n"
    tree = ast.parse(src)
    assert list(bypass_layers(tree, NodeIndex(tree))) == []


def test_a_list_built_then_unpacked_into_one_call_collapses():
    src = "layers = []\nlayers += [nn.Linear(1, torch.tensor([1]))]\nloss = nn.Sequential(*layers)(x)\n"
    result = shrink(src, has("nn.Linear(1, ", ")(x)"), [merge_reassignments, inline_variables, replace_with_subexpression])
    assert result == canon("loss = nn.Linear(1, 1)(x)"), result


def test_replace_with_subexpression_never_offers_a_module_for_a_value():
    src = "import torch\nimport torch.nn as nn\ny = nn.functional.relu(torch.ones(1)) * math.pi\n"
    tree = ast.parse(src)
    index = NodeIndex(tree)
    offered = [ast.unparse(apply_edits(tree, edits, index)).splitlines()[-1]
               for edits in replace_with_subexpression(tree, index)]
    assert not {"y = nn.functional.relu(torch) * math.pi", "y = nn.functional * math.pi"} & set(offered)
    assert {"y = nn.functional.relu(torch.ones(1))", "y = torch.ones(1) * math.pi", "y = math.pi"} <= set(offered)
