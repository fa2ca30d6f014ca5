"""Experiments for a repro that uses `torch.compile`: which layer of the compiler breaks.

- `BACKENDS`: the ladder. The same script without `torch.compile`, then with
  `backend="eager"` (Dynamo only), `"aot_eager"` (+ AOTAutograd), `"aot_eager_decomp_partition"`
  (+ Inductor's decompositions and the partitioner) and `"inductor"`, up to the backend the repro
  uses; the first that fails the way the repro does names the layer.
- `DYNAMIC`: `dynamic=False` and `dynamic=True`: static against dynamic shapes.
- `RESET`: `torch._dynamo.reset()` before every compile: does a compile depend on the one before?
- `COMPARE`: every compiled call also run eagerly on copies of its inputs, results compared:
  a wrong result, and by how much.
"""

from __future__ import annotations

import re

from app.engine.diagnosis import probes
from app.engine.diagnosis.model import (
    Experiment,
    Observation,
    Runs,
    Subject,
    Variant,
    first_other,
    tally,
)
from app.engine.diagnosis.transforms import (
    compile_backend,
    compile_backends,
    compile_calls,
    compile_with,
    reset_before_compiles,
    uses_compile,
    with_prologue,
    without_compile,
)

LAYERS = ("eager", "aot_eager", "aot_eager_decomp_partition", "inductor")
NO_COMPILE = "without torch.compile"
BLAME = {
    NO_COMPILE: "fails without torch.compile too: the bug is in eager PyTorch, not in the compiler",
    "eager": "fails under backend='eager' too: the bug is in Dynamo (graph capture), before AOTAutograd",
    "aot_eager": "fails under backend='aot_eager': the bug is in AOTAutograd (functionalization, the joint "
                 "graph), before the decompositions and Inductor",
    "aot_eager_decomp_partition": "fails under backend='aot_eager_decomp_partition': the bug is in the "
                                  "decompositions or the partitioner, before Inductor's lowering",
    "inductor": "fails under backend='inductor': the bug is in Inductor (lowering or code generation)",
}
_COMPILER_ERROR = re.compile(r"BackendCompilerFailed|InductorError|LoweringException|torch\._dynamo\.exc|"
                             r"\bUnsupported\b|CppCompileError|TorchRuntimeError")


def _label(layer: str) -> str:
    return NO_COMPILE if layer == NO_COMPILE else f"backend={layer!r}"


def ladder(subject: Subject) -> list[Variant]:
    if not uses_compile(subject.source):
        return []
    used = set(compile_backends(subject.source))
    top = min((LAYERS.index(b) for b in used), default=len(LAYERS)) if used <= set(LAYERS) else len(LAYERS)
    variants = [Variant(NO_COMPILE, without_compile(subject.source) or subject.source)]
    for layer in LAYERS[:top]:
        changed = compile_backend(subject.source, layer)
        if changed:
            variants.append(Variant(_label(layer), changed))
    return variants


def _layer(label: str) -> str:
    return NO_COMPILE if label == NO_COMPILE else label.split("=", 1)[1].strip("'")


def ladder_line(subject: Subject, runs: Runs) -> str:
    passed: list[str] = []
    for variant, observations in runs:
        same, _ = tally(observations)
        if same:
            head = f"does not reproduce {_passes(passed)}; " if passed else ""
            return head + BLAME[_layer(variant.label)]
        other = first_other(observations)
        passed.append(_layer(variant.label) + (f" (it fails with {other.description} there)" if other else ""))
    used = set(compile_backends(subject.source))
    if used == {"inductor"} and len(runs) == len(LAYERS):  # every layer below Inductor passed
        return f"does not reproduce {_passes(passed)}; only Inductor fails: the bug is in Inductor (lowering or code generation)"
    return f"does not reproduce {_passes(passed)}: no layer below the repro's backend shows it alone"


def _passes(layers: list[str]) -> str:
    """"without torch.compile and under 'eager', 'aot_eager' and 'aot_eager_decomp_partition'"."""
    plain = [item for item in layers if item.startswith(NO_COMPILE)]
    backends = []
    for item in layers:
        if not item.startswith(NO_COMPILE):
            name, _, note = item.partition(" (")
            backends.append(repr(name) + (f" ({note}" if note else ""))
    parts = plain + ([f"under {_join(backends)}"] if backends else [])
    return " and ".join(parts)


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _ladder_stop(observations: list[Observation]) -> bool:
    return any(o.same for o in observations)


def _dynamic_setting(subject: Subject) -> str | None:
    import ast

    for call in compile_calls(ast.parse(subject.source)):
        for keyword in call.keywords:
            if keyword.arg == "dynamic":
                return ast.unparse(keyword.value)
    return None


def dynamic_variants(subject: Subject) -> list[Variant]:
    if not uses_compile(subject.source):
        return []
    current = _dynamic_setting(subject)
    variants = []
    for value in ("False", "True"):
        if value != current and (changed := compile_with(subject.source, dynamic=value)):
            variants.append(Variant(f"dynamic={value}", changed))
    return variants


def _said(observations: list[Observation]) -> str:
    same, runs = tally(observations)
    if same:
        return "fails the same way"
    other = first_other(observations)
    return f"fails with {other.description}" if other else "passes"


def dynamic_line(subject: Subject, runs: Runs) -> str:
    seen = {variant.label: _said(observations) for variant, observations in runs}
    text = "; ".join(f"{label}: {said}" for label, said in seen.items())
    static, dynamic = seen.get("dynamic=False"), seen.get("dynamic=True")
    if static == "passes" and dynamic == "fails the same way":
        return text + ": the bug is in dynamic-shape (symbolic) compilation"
    if static == "fails the same way" and dynamic == "passes":
        return text + ": the bug needs shapes specialized to their values"
    if static == dynamic == "fails the same way":
        return text + ": not a dynamic-shape bug"
    if static == dynamic == "passes":
        return text + ": it needs the automatic dynamic shapes of a recompilation (dynamic=None)"
    return text


def reset_variants(subject: Subject) -> list[Variant]:
    changed = reset_before_compiles(subject.source)
    return [Variant("torch._dynamo.reset() before each compile", changed)] if changed else []


def reset_line(subject: Subject, runs: Runs) -> str:
    (_, observations), = runs
    said = _said(observations)
    if said == "passes":
        return ("passes with torch._dynamo.reset() before each compile: the failure depends on state an "
                "earlier compile left behind (caches, guards, recompilation)")
    if said == "fails the same way":
        return "fails the same with torch._dynamo.reset() before each compile: each compile fails on its own"
    return f"with torch._dynamo.reset() before each compile it {said}"


def compare_variants(subject: Subject) -> list[Variant]:
    if not uses_compile(subject.source) or _COMPILER_ERROR.search(subject.failure):
        return []  # the compile itself fails: there is no compiled result to compare
    source, shift = with_prologue(subject.source, probes.COMPARE_WITH_EAGER)
    return [Variant("compiled results compared with eager", source, line_shift=shift)]


def compare_line(subject: Subject, runs: Runs) -> str:
    (_, observations), = runs
    seen = [m for o in observations for m in probes.markers(o.output, "compare")]
    if not seen:
        return f"the comparison did not finish ({observations[0].description if observations else 'no run'})"
    counts = seen[-1]
    calls, differ = int(counts.get("calls") or 0), int(counts.get("differ") or 0)
    if differ:
        first = "; ".join(str(line) for line in counts.get("first") or [])[:300]
        return f"compiled results differ from eager in {differ} of {calls} calls: {first}"
    if calls:
        return f"compiled and eager results agree in all {calls} compiled calls"
    return "no compiled call returned (the compiled function never finished a call)"


BACKENDS = Experiment(
    "backends", "compile", "which layer of torch.compile breaks (Dynamo, AOTAutograd, decompositions, Inductor)",
    ladder, ladder_line, budget_s=200.0, stop=_ladder_stop)
DYNAMIC = Experiment("dynamic_shapes", "compile", "static against dynamic shapes", dynamic_variants, dynamic_line,
                     budget_s=120.0)
RESET = Experiment("dynamo_reset", "compile", "does a compile depend on an earlier one", reset_variants, reset_line,
                   budget_s=90.0)
COMPARE = Experiment("compare_with_eager", "compile", "do compiled results match eager", compare_variants,
                     compare_line, budget_s=90.0)
