"""Each experiment: what triggers it (the catalog row it belongs to), the variants it runs, and
the line it reports, with a fake sandbox answering per variant. Then the plan's rules: order,
budgets, GPU-only experiments, the ladder's stop, the next step."""

from __future__ import annotations

import pytest

from app.engine.diagnosis import plan
from app.engine.diagnosis.model import NOT_RUN, RAN, Observation, Subject, Variant
from tests.engine.diagnosis.test_probes import ANOMALY_OUTPUT

COMPILED = "import torch\nm = torch.compile(model)\ny = m(torch.ones(2))\nassert torch.allclose(y, model(x))\n"
TWO_COMPILES = "import torch\na = torch.compile(f)\nb = torch.compile(g)\nb(a(x))\n"
NAN_SOURCE = "import torch\nx = torch.zeros(3, requires_grad=True)\ny = torch.log(x)\ny.sum().backward()\n"
OOM_SOURCE = "import torch\nq_len = 100000\nm = torch.full((q_len, q_len), 0.0)\nm.triu_(1)\n"
CUDA_SOURCE = "import torch\nemb = torch.nn.Embedding(3, 5).cuda()\nout = emb(torch.tensor([3]).cuda())\n"
LOADER = "from torch.utils.data import DataLoader\nfor b in DataLoader(ds, batch_size=4, num_workers=2):\n    pass\n"
FLAKY = "import torch\nx = torch.randn(3)\nassert x.sum() > 0\n"

PASS = ("passed", False, "passed", "")
SAME = ("error", True, "AssertionError: Tensor-likes are not close!", "")


def fake(answers: dict[str, tuple[str, bool, str, str]], default=SAME, seen: list[str] | None = None):
    """A sandbox answering each variant by its label (prefix match); `seen` records the order."""

    def run(variant: Variant, timeout_s: float) -> list[Observation]:
        if seen is not None:
            seen.append(variant.label)
        outcome, same, description, output = next(
            (a for label, a in answers.items() if variant.label.startswith(label)), default)
        return [Observation(outcome, same, description, output, 1.0) for _ in range(variant.runs)]

    return run


def finding(report, name):
    return next(f for f in report.findings if f.experiment == name)


CASES = [
    # (experiment, subject, answers, the line says)
    ("backends", Subject(COMPILED, "AssertionError: Tensor-likes are not close!"),
     {"without": PASS, "backend='eager'": PASS},
     "does not reproduce without torch.compile and under 'eager'; fails under backend='aot_eager': the bug is in "
     "AOTAutograd"),
    ("dynamic_shapes", Subject(COMPILED, "AssertionError: x"), {"dynamic=False": PASS},
     "dynamic=False: passes; dynamic=True: fails the same way: the bug is in dynamic-shape (symbolic) compilation"),
    ("dynamo_reset", Subject(TWO_COMPILES, "RuntimeError: guard failed"), {"torch._dynamo.reset()": PASS},
     "passes with torch._dynamo.reset() before each compile: the failure depends on state an earlier compile left"),
    ("compare_with_eager", Subject(COMPILED, "AssertionError: x"),
     {"compiled results": ("error", True, "AssertionError: x",
                           'SCRUB-PROBE compare {"calls": 1, "differ": 1, "first": ["Scalars are not close!", '
                           '"Expected 37269600.0 but got inf."]}\n')},
     "compiled results differ from eager in 1 of 1 calls: Scalars are not close!; Expected 37269600.0 but got inf."),
    ("first_nonfinite", Subject(NAN_SOURCE, "AssertionError: loss is nan"),
     {"first non-finite": ("error", True, "AssertionError: loss is nan",
                           'SCRUB-PROBE first-nonfinite {"op": "aten.log.default", "kind": "NaN", "where": '
                           '"<module>", "line": 4, "code": "y = torch.log(x)", "library": null}\n')},
     "first NaN from `aten.log.default`, at line 3: `y = torch.log(x)`"),
    ("detect_anomaly", Subject(NAN_SOURCE, "RuntimeError: Function 'SqrtBackward0' returned nan values"),
     {"torch.autograd": ("error", True, "RuntimeError: Function 'SqrtBackward0' returned nan", ANOMALY_OUTPUT)},
     "detect_anomaly: `SqrtBackward0` returned nan in backward; its forward op is at line 5 in `forward`: "
     "`y = torch.sqrt(x - 1)`"),
    ("float64", Subject(NAN_SOURCE, "AssertionError: loss is nan"), {"float64": PASS},
     "passes in float64: a float32 precision limit"),
    ("smaller_sizes", Subject(OOM_SOURCE, "RuntimeError: DefaultCPUAllocator: can't allocate memory"),
     {"sizes / 8": ("error", False, "RuntimeError: DefaultCPUAllocator: can't allocate memory", ""),
      "sizes / 64": ("error", True, "AssertionError: row 42950 is not zero", "")},
     "with the sizes / 64 it fails the same way: the out-of-memory is not the bug"),
    ("cuda_launch_blocking", Subject(CUDA_SOURCE, "RuntimeError: CUDA error: device-side assert triggered", gpu=True),
     {"CUDA_LAUNCH": ("error", True, "RuntimeError: CUDA error: device-side assert triggered",
                      'Traceback (most recent call last):\n  File "/tmp/repro.py", line 4, in <module>\n'
                      '    out = emb(torch.tensor([3]).cuda())\nRuntimeError: CUDA error\n')},
     "with CUDA_LAUNCH_BLOCKING=1 it fails with RuntimeError: CUDA error: device-side assert triggered at line 3: "
     "`out = emb(torch.tensor([3]).cuda())`"),
    ("on_cpu", Subject(CUDA_SOURCE, "RuntimeError: CUDA error: device-side assert triggered", gpu=True),
     {"on CPU": ("error", False, "IndexError: index out of range in self", "")},
     "on CPU it fails with a readable error: IndexError: index out of range in self"),
    ("num_workers_0", Subject(LOADER, "RuntimeError: Caught RuntimeError in DataLoader worker process 0."),
     {"num_workers=0": ("error", False, "RuntimeError: stack expects each tensor to be equal size", "")},
     "with num_workers=0 the real error shows: RuntimeError: stack expects each tensor to be equal size"),
    ("deterministic_algorithms", Subject(FLAKY, "AssertionError", runs=6, failures=3),
     {"torch.use_det": ("error", False, "RuntimeError: x",
                        "RuntimeError: index_add_cpu_ does not have a deterministic implementation")},
     "`index_add_cpu_` has no deterministic implementation (it raises)"),
    ("one_thread", Subject(FLAKY, "AssertionError", runs=6, failures=3), {"one thread": PASS},
     "one thread (torch.set_num_threads(1)): no run fails (0/5; 3/6 without): the flakiness comes from multithreading"),
    ("one_thread", Subject("import torch\nwith Pool(1) as p:\n    p.map(f, range(3))\n", "timed out after 60 s",
                           outcome="timeout"), {"one thread": ("timeout", True, "timed out after 60 s", "")},
     "with one thread (torch.set_num_threads(1)) it still hangs: the thread pool is not the cause"),
    ("fixed_seeds", Subject(FLAKY, "AssertionError", runs=6, failures=3), {"seeds fixed": SAME},
     "every run fails (5/5; 3/6 without): seed 0 reproduces it every time: the failure depends on the random data"),
    ("hash_seed", Subject(FLAKY, "AssertionError", runs=6, failures=3), {"PYTHONHASHSEED": PASS},
     "PYTHONHASHSEED=0: no run fails (0/5; 3/6 without): the hash seed is the cause (set or dict order, or values "
     "derived from hash())"),
]


@pytest.mark.parametrize(("name", "subject", "answers", "says"), CASES,
                         ids=[f"{c[0]}-{c[1].outcome}" for c in CASES])
def test_each_experiment_runs_when_its_pattern_applies_and_reports_what_it_showed(name, subject, answers, says):
    assert name in [e.name for e in plan.experiments(plan.patterns(subject))]
    report = plan.diagnose_repro(subject, fake(answers), budget_s=10_000)
    found = finding(report, name)
    assert found.status == RAN
    assert says in found.line


def test_an_experiment_that_needs_a_gpu_is_reported_as_not_run_on_a_cpu_worker():
    subject = Subject(CUDA_SOURCE, "RuntimeError: CUDA error: device-side assert triggered", gpu=False)
    seen: list[str] = []
    report = plan.diagnose_repro(subject, fake({}, seen=seen), budget_s=10_000)
    lines = {f.experiment: (f.status, f.line) for f in report.findings}
    assert lines["on_cpu"][0] == lines["cuda_launch_blocking"][0] == NOT_RUN
    assert "needs a GPU, and this worker has none" in lines["on_cpu"][1]
    assert seen == []


def test_a_repro_with_nothing_to_vary_runs_nothing():
    subject = Subject("import torch\nprint(torch.ones(2))\n", "RuntimeError: Caught RuntimeError in DataLoader worker process 0.")
    seen: list[str] = []
    report = plan.diagnose_repro(subject, fake({}, seen=seen))
    assert report.patterns == ["dataloader_worker_died"] and report.findings == [] and seen == []


def test_the_ladder_stops_at_the_first_layer_that_fails_the_same_way():
    seen: list[str] = []
    plan.diagnose_repro(Subject(COMPILED, "AssertionError: x"), fake({"without": PASS}, seen=seen))
    ladder = [label for label in seen if label.startswith(("without", "backend="))]
    assert ladder == ["without torch.compile", "backend='eager'"]


def test_the_whole_budget_is_shared_and_what_cannot_start_says_so():
    clock = iter(range(0, 10_000, 50)).__next__  # every reading of the clock is 50 s later
    report = plan.diagnose_repro(Subject(COMPILED, "AssertionError: x"), fake({}), budget_s=120, clock=clock)
    statuses = [(f.experiment, f.status) for f in report.findings]
    assert statuses[0] == ("backends", RAN)
    assert any(status == NOT_RUN for _, status in statuses[1:])
    assert "the 120 s for experiments are spent" in report.findings[-1].line


def test_conditions_on_the_repro_come_first_then_the_error_text():
    subject = Subject(COMPILED, "AssertionError: Tensor-likes are not close!", output="tensor([nan, 1.])")
    assert [p.name for p in plan.patterns(subject)] == ["compile_failure", "nan_inf", "tolerance_mismatch"]


def test_variants_of_one_experiment_run_side_by_side_when_asked():
    seen: list[str] = []
    report = plan.diagnose_repro(Subject(COMPILED, "AssertionError: x"), fake({}, seen=seen), parallel=2)
    assert finding(report, "dynamic_shapes").variants[0]["label"] == "dynamic=False"
    assert {"dynamic=False", "dynamic=True"} <= set(seen)


def test_the_next_step_follows_the_layer_the_ladder_blames():
    report = plan.diagnose_repro(Subject(COMPILED, "AssertionError: x"),
                                 fake({"without": PASS, "backend='eager'": PASS, "backend='aot_eager'": PASS,
                                       "backend='aot_eager_decomp_partition'": PASS}))
    assert "only Inductor fails: the bug is in Inductor" in finding(report, "backends").line
    assert report.next_step == "An Inductor bug: route it to `module: inductor`."
    assert report.to_dict()["patterns"] == ["compile_failure"]
    assert type(report).from_dict(report.to_dict()) == report


def test_a_flaky_variant_runs_in_batches_and_stops_when_its_budget_is_spent():
    batches: list[int] = []

    def run(variant: Variant, timeout_s: float) -> list[Observation]:
        batches.append(variant.runs)
        return [Observation("passed", False, "passed") for _ in range(variant.runs)]

    ticks = iter(range(0, 100_000, 20)).__next__  # 20 s per clock reading
    subject = Subject(FLAKY, "AssertionError", runs=6, failures=3)
    report = plan.diagnose_repro(subject, run, budget_s=10_000, parallel=2, clock=ticks)
    assert batches[:3] == [2, 2, 1]  # the first experiment: 5 runs, 2 at a time
    report = plan.diagnose_repro(subject, run, budget_s=45, parallel=2, clock=ticks)
    ran = [f for f in report.findings if f.status == RAN]
    assert ran and sum(v["runs"] for v in ran[0].variants) < 5 and "/" in ran[0].line
