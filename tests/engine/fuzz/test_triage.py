"""Reading a failing TorchFuzz-shaped program: phase, generator bug or torch bug, failing operators."""

from __future__ import annotations

from pathlib import Path

from app.engine.fuzz.triage import failing_operators, phase_of, plan_devices, triage

PROGRAM = '''\
import torch
import sys
torch.manual_seed(42)


def foo(arg0, arg1):
    var_node_1 = torch.nn.functional.gelu(arg0)
    var_node_2 = arg1 * 0.5
    var_node_3 = var_node_1[var_node_2]
    var_node_4 = torch.cumsum(var_node_3, dim=0)
    return var_node_4


arg0 = torch.as_strided(torch.randn(64), (8, 8), (8, 1))
arg1 = torch.randint(0, 8, (3,)).size(0)
if __name__ == "__main__":
    out_eager = foo(arg0, arg1)
    out_eager.sum().backward()
    print("Eager Success! ✅")
    compiled_foo = torch.compile(foo, fullgraph=True, dynamic=True)
    out_compiled = compiled_foo(arg0, arg1)
    out_compiled.sum().backward()
    print("Compile Success! ✅")
    if not torch.allclose(out_eager, out_compiled, rtol=1e-2, atol=1e-2):
        print("mismatch")
        sys.exit(1)
'''


def _traceback(outer: int, inner: int, error: str) -> str:
    return (f'Traceback (most recent call last):\n  File "/tmp/work/repro.py", line {outer}, in <module>\n'
            f'    statement\n  File "/tmp/work/repro.py", line {inner}, in foo\n    inner\n{error}\n')


def test_an_eager_usage_error_is_a_generator_bug_named_by_its_operator():
    result = triage(PROGRAM, _traceback(17, 9, "IndexError: tensors used as indices must be long, int, byte or "
                                                "bool tensors"))
    assert (result.phase, result.verdict) == ("eager", "invalid-program")
    assert "generator bug" in result.reason and result.failing_line == "var_node_3 = var_node_1[var_node_2]"
    assert not result.is_bug


def test_a_compiler_crash_is_a_torch_bug_placed_by_the_programs_own_operators():
    output = "Eager Success! ✅\n" + _traceback(21, 10, "torch._inductor.exc.InductorError: LoweringException: "
                                                         "AssertionError: cumsum")
    result = triage(PROGRAM, output)
    assert (result.phase, result.verdict) == ("compiled", "torch-bug")
    assert result.operators[0] == "cumsum" and "gelu" in result.operators
    assert not {"as_strided", "randn", "size", "randint"} & set(result.operators)


def test_an_eager_internal_assert_is_still_a_torch_bug():
    result = triage(PROGRAM, _traceback(17, 10, "RuntimeError: cumsum INTERNAL ASSERT FAILED at aten/x.cpp"))
    assert (result.phase, result.verdict) == ("eager", "torch-bug")


def test_a_mismatch_without_a_traceback_is_a_wrong_result():
    result = triage(PROGRAM, "Eager Success! ✅\nCompile Success! ✅\nmismatch\n")
    assert (result.phase, result.verdict) == ("compare", "torch-bug")
    assert phase_of(PROGRAM, 25) == "compare" and phase_of(PROGRAM, 18) == "eager"


def test_a_missing_device_is_no_bug_and_only_the_workers_devices_run():
    result = triage(PROGRAM, _traceback(17, 7, "AssertionError: Torch not compiled with CUDA enabled"))
    assert result.verdict == "device-unavailable"
    assert plan_devices(("cpu",), "cuda", gpu=False) == (["cpu"], {"cuda": "this worker has no GPU (route the run "
                                                                             "to a repro-gpu worker)"})
    assert plan_devices(("cpu",), "cuda", gpu=True) == (["cpu", "cuda"], {})
    assert plan_devices(("cpu",), None, gpu=False) == ([""], {})
    assert failing_operators(PROGRAM, None)[:2] == ("gelu", "cumsum")


REAL = Path(__file__).resolve().parents[2] / "fixtures" / "torchfuzz" / "seed_9_default.py"
# The benchmark input (benchmarks/torchfuzz_real/README.md says where its text comes from).
ISSUE_164875 = Path(__file__).resolve().parents[3] / "benchmarks" / "torchfuzz_real" / "programs" / "164875.py"


def _lines(program: str, text: str) -> int:
    return next(i for i, line in enumerate(program.splitlines(), 1) if line.startswith(text))


def test_a_real_torchfuzz_program_failing_in_eager_is_a_generator_bug_named_by_gather_not_its_plumbing():
    program = REAL.read_text()  # printed by TorchFuzz for seed 9 (tests/fixtures/torchfuzz/README.md)
    outer, inner = _lines(program, "result_original ="), _lines(program, "    var_node_8 = torch.gather")
    output = (f'Traceback (most recent call last):\n  File "/tmp/work/repro.py", line {outer}, in <module>\n'
              f'    result_original = fuzzed_program(*args)\n  File "/tmp/work/repro.py", line {inner}, in '
              "fuzzed_program\n    var_node_8 = torch.gather(var_node_9, 0, _index_var_node_8)\n"
              "RuntimeError: gather(): Expected dtype int32/int64 for index\n")
    result = triage(program, output)
    assert (result.phase, result.verdict) == ("eager", "invalid-program")
    assert result.operators[0] == "gather"
    assert not {"as_strided", "size", "remainder", "randint", "compiled_program", "fuzzed_program"} & \
        set(result.operators)


def test_a_compiled_crash_of_a_real_program_ranks_the_operator_its_error_names_first():
    program = REAL.read_text()
    outer = _lines(program, "result_compiled =")
    output = ("✅ eager success\nTraceback (most recent call last):\n"
              f'  File "/tmp/work/repro.py", line {outer}, in <module>\n    result_compiled = compiled_program(*args)\n'
              '  File "/site-packages/torch/_inductor/lowering.py", line 1, in f\n'
              "torch._inductor.exc.InductorError: LoweringException: AssertionError: aten.argsort.default\n")
    result = triage(program, output)
    assert (result.phase, result.verdict) == ("compiled", "torch-bug")
    assert result.operators[0] == "argsort" and "compiled_program" not in result.operators


def test_a_mismatch_of_a_program_drawing_random_numbers_inside_the_compiled_function_is_a_generator_bug():
    program = REAL.read_text().replace(
        "    _index_var_node_3 = torch.remainder(var_node_5, _input_size_var_node_3)",
        "    _index_var_node_3 = torch.randint(0, _input_size_var_node_3, (7,), device=var_node_5.device)")
    result = triage(program, "✅ eager success\n✅ compile success\nMISMATCH out_eager_sum: 1 out_compiled_sum: 9\n")
    assert (result.phase, result.verdict) == ("compare", "invalid-program") and "randint" in result.reason
    assert triage(REAL.read_text(), "✅ eager success\n✅ compile success\nmismatch\n").verdict == "torch-bug"


def test_a_compiled_failure_on_an_unbacked_size_is_a_torch_bug_with_the_caveat_pytorch_gave():
    """pytorch/pytorch#164875's program (output: torch 2.13.0+cpu): eager runs, Dynamo cannot
    broadcast an unbacked size (u0) against s67. PyTorch closed the issue as expected behaviour
    caused by the fuzzer; the triage says so next to its verdict instead of a bare "torch bug"."""
    program = ISSUE_164875.read_text()
    outer = _lines(program, "result_compiled =")
    output = ("✅ eager success\nTraceback (most recent call last):\n"
              f'  File "/tmp/work/repro.py", line {outer}, in <module>\n    result_compiled = compiled_program(*args)\n'
              '  File "/site-packages/torch/_dynamo/exc.py", line 723, in unimplemented\n    raise Unsupported(\n'
              "torch._dynamo.exc.TorchRuntimeError: RuntimeError when making fake tensor call\n"
              "  Explanation: Dynamo failed to run FX node with fake tensors: call_function <built-in method add of "
              "type object at 0x7faed18cea40>(*(FakeTensor(..., size=(s67, 0), dtype=torch.int64), FakeTensor(..., "
              "size=(u0, 0), dtype=torch.int64)), **{}): got RuntimeError('The size of tensor a (s67: hint = 20) "
              "must match the size of tensor b (u0) at non-singleton dimension 0)')\n")
    result = triage(program, output)
    assert (result.phase, result.verdict) == ("compiled", "torch-bug")
    assert "unbacked" in result.reason and "torch._check" in result.reason and "u0" in result.reason
    plain = triage(PROGRAM, _traceback(_lines(PROGRAM, "    out_compiled ="), 7,
                                        "torch._inductor.exc.InductorError: LoweringException: AssertionError: x"))
    assert "unbacked" not in plain.reason


def test_a_mismatch_whose_progress_prints_are_gone_is_still_a_compare_failure():
    """The minimizer drops TorchFuzz's prints ('Compile Success! ✅'), which told the phase of a
    failure without a traceback: the smaller program's exit 1 read as 'unknown', its error as
    'exit 1', and the minimize stage kept the original ("fails differently")."""
    program = ("import sys\nimport torch\n\n\ndef f(x):\n    return x.cumsum(0)\n\n\nargs = (torch.ones(8),)\n"
               "out_eager = f(*args)\nout_compiled = torch.compile(f, backend=bad)(*args)\n"
               "if (out_eager.sum() - out_compiled.sum()).abs().item() > 1:\n    sys.exit(1)\n")
    result = triage(program, "")
    assert (result.phase, result.verdict) == ("compare", "torch-bug")
    early = program.replace("args = (torch.ones(8),)\n", "args = (torch.ones(8),)\nif len(args) > 3:\n    sys.exit(1)\n")
    assert triage(early, "").phase == "unknown"  # an exit before compiling: where it failed is not known
