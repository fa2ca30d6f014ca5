"""Code and errors outside fenced blocks, as real reports paste them (#13 patterns 4 and 5)."""

from __future__ import annotations

from app.engine.issue.loose import errors_in_prose, inline_scripts, plain_text, unfenced_scripts
from app.engine.issue.markdown import repro_candidates, reported_error

UNFENCED_AFTER_CODE = """### 🐛 Describe the bug

DataLoader with num_workers=2 hangs forever after a parallel matmul in the parent.

Code:
import torch
from torch.utils.data import DataLoader, TensorDataset

x = torch.randn(2000, 2000)
y = x @ x
loader = DataLoader(TensorDataset(torch.arange(10)), num_workers=2)
for batch in loader:
    print(batch)

The loop never prints anything.

### Versions
PyTorch version: 2.3.0
"""

DETAILS = """<details>
<summary>Repro</summary>
<pre>
import torch
x = torch.tensor([1.0, float(&quot;nan&quot;)])
print(torch.nanmean(x))
</pre>
</details>
"""

INLINE = "Just run `import torch; a = torch.zeros(3, dtype=torch.half); print(torch.cumsum(a, 0))` and it crashes."

OUTPUT_AFTER_CODE = """import torch
x = torch.ones(2)
print(x / 0)
tensor([inf, inf])
"""


def post(body: str, login: str = "reporter") -> dict:
    return {"body": body, "user": {"login": login}, "html_url": "u", "created_at": "t"}


def test_code_after_a_label_with_no_fence_is_a_repro():
    [script] = unfenced_scripts(UNFENCED_AFTER_CODE)
    assert script.startswith("import torch") and script.rstrip().endswith("print(batch)")
    assert "The loop never" not in script
    [candidate] = repro_candidates(post(UNFENCED_AFTER_CODE), [])
    assert "DataLoader(TensorDataset" in candidate.source and candidate.self_contained


def test_code_in_details_and_pre_is_a_repro_with_entities_decoded():
    [candidate] = repro_candidates(post(DETAILS), [])
    assert 'float("nan")' in candidate.source and "<pre>" not in candidate.source


def test_a_whole_script_in_single_backticks_is_a_repro():
    assert inline_scripts(INLINE) == ["import torch; a = torch.zeros(3, dtype=torch.half); print(torch.cumsum(a, 0))"]
    [candidate] = repro_candidates(post(INLINE), [])
    assert "torch.cumsum" in candidate.source


def test_printed_output_after_unfenced_code_is_not_part_of_the_script():
    [script] = unfenced_scripts(OUTPUT_AFTER_CODE)
    assert script.splitlines() == ["import torch", "x = torch.ones(2)", "print(x / 0)"]


def test_inline_spans_that_are_not_scripts_are_ignored():
    assert inline_scripts("Call `torch.compile(model)` and then `model(x)` fails.") == []
    assert unfenced_scripts("from the docs, import is slow") == []


def test_an_error_named_inside_a_prose_line_is_the_reported_error():
    text = "When I run it on CPU, result: RuntimeError: \"addmm_cpu\" not implemented for 'Half'\nthanks"
    found = reported_error(text)
    assert (found.exception, found.message) == ("RuntimeError", "\"addmm_cpu\" not implemented for 'Half'")


def test_an_error_merely_mentioned_is_not_taken():
    assert errors_in_prose("It raises a RuntimeError about dtypes.") == []


def test_an_unfenced_traceback_gives_its_last_exception():
    text = """I get this:

Traceback (most recent call last):
  File "repro.py", line 4, in <module>
    torch.linalg.inv(x)
torch._C._LinAlgError: linalg.inv: The diagonal element 2 is zero, the inversion could not be completed

any idea?"""
    found = reported_error(text)
    assert found.exception == "torch._C._LinAlgError" and found.message.startswith("linalg.inv: The diagonal element 2")


def test_a_quoted_traceback_is_read_through_the_quote_markers():
    text = """> Traceback (most recent call last):
>   File "a.py", line 2, in <module>
> ValueError: too many values to unpack (expected 2)"""
    found = reported_error(text)
    assert (found.exception, found.message) == ("ValueError", "too many values to unpack (expected 2)")


def test_plain_text_removes_quotes_and_html_wrappers():
    assert plain_text("> a\n<details>\n<summary>x</summary>\nb &lt; c\n</details>").split("\n") == ["a", "", "", "b < c", ""]


def test_a_single_torch_call_alone_on_a_line_is_a_repro_and_gets_its_import():
    # pytorch/pytorch#34533: the whole repro is one inline span.
    body = "## To Reproduce\n\nSteps to reproduce the behavior:\n\n`torch.exp(torch.tensor([1.0, 2.0]))`\n\n" \
           "Installed with (`conda`, `pip`, source)"
    [candidate] = repro_candidates(post(body), [])
    assert candidate.source == "import torch\ntorch.exp(torch.tensor([1.0, 2.0]))\n" and candidate.self_contained


def test_a_fenced_torch_call_without_import_is_a_repro_but_printed_output_is_not():
    [candidate] = repro_candidates(post("```\ntorch.exp(torch.tensor([1.0]))\n```"), [])
    assert candidate.source.startswith("import torch\n")
    assert repro_candidates(post("```\ntensor([2.7183])\n```"), []) == []


def test_the_expected_behaviour_section_names_the_exception_a_fix_should_raise():
    from app.engine.issue.loose import expected_exception

    body = "### Result\n```segmentation fault```\n\n### Expected behavior\nGraceful termination or a RuntimeError " \
           "to be thrown.\n\n### Note\nfound by fuzzing"
    assert expected_exception(body) == "RuntimeError"
    assert expected_exception("### Expected behavior\nIt should return 3.\n") is None
    assert expected_exception("A RuntimeError is thrown here.") is None  # not in that section


def test_a_title_reporting_a_missing_error_asks_for_the_error_rather_than_reporting_one():
    """Real issue #196106 (held-out batch C): "take_along_dim(..., dim=...) silently wraps
    out-of-bounds indices instead of raising" quotes the RuntimeError its sibling ops raise; that
    error is what the report asks for, not the failure it saw."""
    from app.engine.issue.loose import asks_for_error

    assert asks_for_error("pick(..., dim=...) silently wraps an out-of-range index instead of raising")
    assert asks_for_error("scale() does not raise an error for a negative factor")
    assert asks_for_error("resize_to() accepts a negative size without raising")
    assert asks_for_error("`fold` doesn't throw for a size that does not divide")
    # an error or a crash that happens is the reported failure, whatever the title asks for
    assert not asks_for_error("pick() raises INTERNAL ASSERT FAILED instead of raising a proper error")
    assert not asks_for_error("pick() segfaults instead of throwing")
    assert not asks_for_error("torch.compile silently produces a wrong result")
    assert not asks_for_error("torch.add with complex tensors and floating alpha throws an error")
    assert not asks_for_error("")
