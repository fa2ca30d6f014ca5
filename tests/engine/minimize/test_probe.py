"""The run-time probe: the finite-ness of a failing check's operands, the program unchanged."""

from __future__ import annotations

import subprocess
import sys

from app.engine.minimize.oracle import signature_of
from app.engine.minimize.probe import MARK, probed, read_probe, unprobed
from app.engine.sandbox.capture import CapturedOutput
from app.engine.sandbox.runner import ProcessResult

BIASED = "import math\nx = [1.0, 2.0, 4.0]\nmean = sum(x) / len(x)\nstd = math.sqrt(sum((v - mean) ** 2 for v in x) / (len(x) - 1))\n" \
         "assert abs((x[0] - mean) / std - -0.8) < 1e-3, 'normalized value'\n"
NAN = BIASED.replace("x = [1.0, 2.0, 4.0]", "x = [1.0]").replace("math.sqrt(", "(lambda v: v if v == v else float('nan'))(") \
    .replace("/ (len(x) - 1)", "/ max(len(x) - 1, 1) * float('nan')")


def _run(source: str, folder) -> ProcessResult:
    (folder / "repro.py").write_text(probed(source))
    done = subprocess.run([sys.executable, "repro.py"], check=False, cwd=folder, capture_output=True, timeout=60)
    output = done.stdout + done.stderr
    return ProcessResult(done.returncode, None, False, 0.0, CapturedOutput(head=output, total_bytes=len(output)), "cold")


def test_the_probe_reports_each_operand_and_keeps_lines_and_the_failure(tmp_path):
    assert probed(BIASED).count("\n") == BIASED.count("\n") and unprobed(probed(BIASED)) == BIASED
    finite = _run(BIASED, tmp_path)
    text = finite.output.text()
    assert f"{MARK} finite,finite" in text and read_probe(text) == ("finite", "finite")
    assert text.rstrip().endswith("AssertionError: normalized value")  # the failure itself is the same
    assert 'repro.py", line 5, in <module>' in text
    assert read_probe(_run(NAN, tmp_path).output.text()) == ("nonfinite", "finite")


def test_a_check_whose_side_became_nan_is_another_failure(tmp_path):
    original = signature_of(_run(BIASED, tmp_path), BIASED)
    assert original.finite == ("finite", "finite")
    assert not original.matches(signature_of(_run(NAN, tmp_path), NAN))
    shifted = BIASED.replace("4.0]", "8.0]")
    assert original.matches(signature_of(_run(shifted, tmp_path), shifted))


def test_lines_put_after_the_imports_later_do_not_lose_the_probe(tmp_path):
    # the fuzz job puts a device statement after a program's imports, around the probe
    program = "import math\nx = [1.0, float('nan')]\nassert math.fsum(x) == 1.0, 'sum'\n"
    text = probed(program)
    assert text.splitlines()[0].startswith("import math; exec(")  # the imports stay first
    moved = text.replace("\nx = ", "\nDEVICE = 'cpu'\nx = ", 1)
    (tmp_path / "repro.py").write_text(moved)
    done = subprocess.run([sys.executable, "repro.py"], check=False, cwd=tmp_path, capture_output=True, timeout=60)
    assert read_probe((done.stdout + done.stderr).decode()) == ("nonfinite", "finite")


def test_programs_without_a_check_or_with_future_imports_run_as_they_are():
    assert probed("x = 1\nprint(x)\n") == "x = 1\nprint(x)\n"
    future = "from __future__ import annotations\nassert 1 == 2\n"
    assert probed(future).startswith("from __future__ import annotations; exec(")
    compile(probed(future), "repro.py", "exec")
    assert unprobed(probed(future)) == future
    assert probed("def broken(:\n") == "def broken(:\n"


def test_a_one_sided_check_is_probed_on_what_it_tests(tmp_path):
    grad = ("import math\nclass P:\n    grad = [float('nan')]\n"
            "p = P()\nassert all(math.isfinite(g) for g in p.grad), 'non-finite gradient in value.weight'\n")
    # `all(...)` is the check's own call: the probe looks through it (a generator here: no value
    # of its own to read) -- a tensor check reads `p.grad` itself
    import ast

    from app.engine.minimize.probe import check_table
    one = "assert torch.isfinite(p.grad).all(), 'x'"
    assert check_table(ast.parse(one), one) == {one: ["p.grad"]}
    other = "assert not torch.isnan(loss).any()"
    assert check_table(ast.parse(other), other) == {other: ["loss"]}
    none = grad.replace("assert all(math.isfinite(g) for g in p.grad)", "assert p.missing")
    none = none.replace("class P:\n    grad = [float('nan')]\n", "class P:\n    missing = None\n")
    assert read_probe(_run(none, tmp_path).output.text()) == ("none",)


def test_a_compared_value_that_became_all_zeros_is_another_failure(tmp_path):
    # a candidate whose side returns a zero bias, or `(x - x) * ...`, keeps the operations
    # (`exp` here) in the fingerprint but compares nothing of what the original computed
    program = "import math\nx = 3.0\nassert math.exp(x) * 2.0 == 1.0, 'v'\n"
    zeroed = program.replace("* 2.0", "* 0.0")
    original = signature_of(_run(program, tmp_path), program)
    assert original.finite == ("finite", "finite")
    candidate = signature_of(_run(zeroed, tmp_path), zeroed)
    assert candidate.finite == ("zero", "finite") and candidate.operations == original.operations
    assert not original.matches(candidate)
    assert original.matches(signature_of(_run(program.replace("* 2.0", "* 5.0"), tmp_path), program))
