"""Probe output read back: markers, frames of the repro, anomaly mode's warning, the op that
has no deterministic implementation."""

from __future__ import annotations

from app.engine.diagnosis import probes

# As torch 2.13 prints it (an anomaly-mode run of a sqrt of a negative number, trimmed).
ANOMALY_OUTPUT = """\
/usr/lib/python3.11/site-packages/torch/autograd/graph.py:979: UserWarning: Error detected in SqrtBackward0. \
Traceback of forward call that caused the error:
  File "/tmp/repro.py", line 8, in <module>
    M()(x).backward()
  File "/usr/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1789, in _call_impl
    return forward_call(*args, **kwargs)
  File "/tmp/repro.py", line 6, in forward
    y = torch.sqrt(x - 1)
 (Triggered internally at /__w/pytorch/pytorch/torch/csrc/autograd/python_anomaly_mode.cpp:122.)
  return Variable._execution_engine.run_backward(
Traceback (most recent call last):
  File "/tmp/repro.py", line 8, in <module>
    M()(x).backward()
  File "/usr/lib/python3.11/site-packages/torch/_tensor.py", line 623, in backward
    torch.autograd.backward(
RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.
"""


def test_markers_of_a_kind_are_parsed_and_broken_ones_skipped():
    output = ('noise\nSCRUB-PROBE compare {"calls": 2, "differ": 1}\nSCRUB-PROBE compare {broken\n'
              'SCRUB-PROBE first-nonfinite {"op": "aten.log.default"}\n')
    assert probes.markers(output, "compare") == [{"calls": 2, "differ": 1}]
    assert probes.markers(output, "first-nonfinite") == [{"op": "aten.log.default"}]


def test_anomaly_names_the_backward_node_and_the_forward_line_of_the_repro():
    node, frame, what = probes.anomaly(ANOMALY_OUTPUT)
    assert (node, what) == ("SqrtBackward0", "nan")
    assert frame.describe() == "line 6 in `forward`: `y = torch.sqrt(x - 1)`"
    assert frame.describe(shift=1) .startswith("line 5")


def test_the_last_frame_of_the_repro_in_the_last_traceback():
    frame = probes.last_frame(ANOMALY_OUTPUT)
    assert (frame.line, frame.code, frame.function) == (8, "M()(x).backward()", "<module>")
    assert frame.describe() == "line 8: `M()(x).backward()`"
    assert probes.last_frame("no traceback here") is None


def test_the_op_without_a_deterministic_implementation():
    output = ("RuntimeError: index_add_cuda_ does not have a deterministic implementation, but you set "
              "'torch.use_deterministic_algorithms(True)'.")
    assert probes.nondeterministic_op(output) == "index_add_cuda_"
    assert probes.nondeterministic_op("RuntimeError: other") is None


def test_the_first_nonfinite_probe_compiles_with_and_without_inf():
    for inf in (False, True):
        code = probes.first_nonfinite(inf=inf)
        compile(code, "<scrub-experiment>", "exec")
        assert f"_SCRUB_INF = {inf}" in code
