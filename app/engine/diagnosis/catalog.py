"""The error-pattern catalog (seed `003_...txt`, "debugging techniques"): error -> what to try,
and the experiments that try it.

Each row is a `Pattern`: a name, a regex over the error text, a hint, the `experiments` to run
once a repro showing it reproduces (`app.engine.diagnosis.plan`), and optionally `when`, a
condition on the repro itself (it compiles, it is flaky, it prints NaN) for patterns no error
text names. Adding a row adds its experiments. `diagnose(text)` returns the first row whose
regex matches, so the table runs from the most specific patterns to the most general: an
`illegal memory access` is also a `CUDA error`, a device-side assert is usually an index out of
bounds. Hints say what to do next, in the seed's order: make it deterministic, read the real
error, minimize, then fix; never hide the error behind a try/except.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from app.engine.diagnosis import compiled, numerics, processes
from app.engine.diagnosis.model import Experiment, Subject
from app.engine.diagnosis.transforms import uses_compile

CUDA = (processes.LAUNCH_BLOCKING, processes.ON_CPU)
NONDETERMINISM = (processes.DETERMINISTIC, processes.ONE_THREAD, processes.SEEDS, processes.HASH_SEED)
COMPILE = (compiled.BACKENDS, compiled.DYNAMIC, compiled.RESET, compiled.COMPARE)
NAN = (numerics.FIRST_NONFINITE, numerics.ANOMALY, numerics.FLOAT64)


@dataclass(frozen=True)
class Pattern:
    name: str
    regex: re.Pattern[str] | None
    hint: str
    experiments: tuple[Experiment, ...] = ()
    when: Callable[[Subject], bool] | None = None  # applies to a repro whatever its error text


@dataclass(frozen=True)
class Diagnosis:
    name: str
    hint: str
    matched: str  # the text the pattern matched


def _p(name: str, regex: str | None, hint: str, experiments: tuple[Experiment, ...] = (),
       when: Callable[[Subject], bool] | None = None) -> Pattern:
    return Pattern(name, re.compile(regex, re.IGNORECASE) if regex else None, hint, experiments, when)


def _prints_nan(subject: Subject) -> bool:
    """NaN in what the repro printed or raised (not a comparison's "relative difference: nan")."""
    return any(re.search(r"\bnan\b", line, re.IGNORECASE) and "difference" not in line
               for line in subject.text.splitlines())


def _compiles(subject: Subject) -> bool:
    return uses_compile(subject.source)


def _flaky(subject: Subject) -> bool:
    return subject.flaky


CATALOG: tuple[Pattern, ...] = (
    _p(
        "device_side_assert",
        r"device-side assert(?:ion)? triggered|Assertion `[^`]*(?:index|srcIndex|idx)[^`]*` failed",
        "A device-side assert is almost always an index out of bounds (embedding lookup, gather, "
        "cross-entropy target >= num_classes). Rerun on CPU (or with CUDA_LAUNCH_BLOCKING=1) to get "
        "the real IndexError with the offending index; check indices.min() >= 0 and "
        "indices.max() < size before the op.",
        CUDA,
    ),
    _p(
        "illegal_memory_access",
        r"illegal memory access|misaligned address|unspecified launch failure",
        "Asynchronous CUDA error: the reported line is probably not the culprit. Rerun with "
        "CUDA_LAUNCH_BLOCKING=1 for the failing kernel, then on CPU for a clear error; look for "
        "out-of-range indices, NaN/Inf inputs and non-contiguous tensors passed to custom kernels. "
        "compute-sanitizer pinpoints the access.",
        CUDA,
    ),
    _p(
        "cuda_oom",
        r"CUDA out of memory|OutOfMemoryError|CUBLAS_STATUS_ALLOC_FAILED|out of memory on device",
        "CUDA OOM: compare torch.cuda.max_memory_allocated() before/after forward and backward; "
        "reduce the batch size, free references kept across iterations (losses appended without "
        ".item(), tensors cached in lists), call torch.cuda.empty_cache() between tests, and check "
        "for a leak when it only fails late in a shard.",
        (numerics.SMALLER,),
    ),
    _p(
        "cpu_oom",
        r"DefaultCPUAllocator: (?:can't|not enough memory)|\bMemoryError\b|Cannot allocate memory|std::bad_alloc",
        "Out of host memory: rerun with smaller sizes to see whether the bug needs them at all (a 40 GB "
        "tensor rarely does); if it does, the report needs a machine of that size.",
        (numerics.SMALLER,),
    ),
    _p(
        "compile_failure",
        r"BackendCompilerFailed|InductorError|LoweringException|torch\._dynamo\.exc\.\w+|CppCompileError",
        "A torch.compile failure: rerun with backend='eager' (Dynamo only), 'aot_eager' (+ AOTAutograd) "
        "and 'aot_eager_decomp_partition' (+ decompositions) to find the layer that breaks; try "
        "dynamic=False; compare the compiled result with eager; TORCH_LOGS=+dynamo,aot,inductor and the "
        "minifier (TORCHDYNAMO_REPRO_AFTER) narrow it further.",
        COMPILE,
        when=_compiles,
    ),
    _p(
        "dataloader_worker_died",
        r"DataLoader worker \(pid[ (]?\w*\)?\)? (?:exited|is killed)|DataLoader worker.*exited unexpectedly|"
        r"Caught \w+ in DataLoader worker process",
        "The error points at the DataLoader but the cause is usually the Dataset: it holds CUDA "
        "tensors/modules or objects that cannot be pickled, or a worker ran out of (shared) memory. "
        "Retry with num_workers=0 for the real traceback; try pickle.dumps(dataset); check /dev/shm.",
        (processes.SINGLE_PROCESS,),
    ),
    _p(
        "nan_inf",
        r"\bnan\b|\binf\b.*(?:loss|grad)|Function '\w+' returned nan|detect_anomaly",
        "NaN/Inf: run the step under torch.autograd.detect_anomaly() to name the op that produced "
        "it, log gradient norms per parameter (exploding gradients: lower the learning rate or clip), "
        "and check inputs for NaN/Inf and divisions/logs of zero.",
        NAN,
        when=_prints_nan,
    ),
    _p(
        "shape_mismatch",
        r"size of tensor a \(\d+\) must match the size of tensor b|shapes? .* cannot be multiplied|"
        r"mat\d? and mat\d? shapes|size mismatch|shape '\[[^\]]*\]' is invalid for input of size|"
        r"expected .* to have \d+ channels|Sizes of tensors must match",
        "Shape mismatch: the message has the exact sizes. Print x.shape at the user's frame (the "
        "last frame outside torch/) for both operands, find the layer that produced the wrong size, "
        "and reproduce it with just those layers and a random tensor of that shape.",
    ),
    _p(
        "device_mismatch",
        r"Expected all tensors to be on the same device|expected device .* but got device",
        "Device mismatch: one operand was never moved. Print .device of each input and parameter "
        "at the failing frame; look for tensors created inside forward() without device=x.device.",
    ),
    _p(
        "dtype_mismatch",
        r"expected scalar type \w+ but found \w+|result type \w+ can't be cast|"
        r"Input type \(.*\) and weight type \(.*\) should be the same",
        "Dtype mismatch: print .dtype of the operands at the failing frame; look for a missing "
        ".float()/.to(dtype) or autocast enabled on only one side.",
    ),
    _p(
        "inplace_autograd",
        r"modified by an inplace operation|a leaf Variable that requires grad is being used in an in-place",
        "An in-place op overwrote a tensor autograd saved. torch.autograd.set_detect_anomaly(True) "
        "names the forward op; replace the in-place op (x += y, relu_(), x[idx] = ...) with its "
        "out-of-place form.",
        (numerics.ANOMALY,),
    ),
    _p(
        "nccl_distributed",
        r"NCCL (?:error|WARN|timeout)|ProcessGroupNCCL|Watchdog caught collective operation timeout|"
        r"c10d.*(?:timed out|Timeout)",
        "Collective failure or hang: ranks disagree on the collective sequence or one rank died. "
        "Set NCCL_DEBUG=INFO and TORCH_DISTRIBUTED_DEBUG=DETAIL, compare per-rank stacks "
        "(py-spy dump), and check that every rank reaches the same collectives with the same shapes.",
    ),
    _p(
        "cudnn_error",
        r"CUDNN_STATUS_\w+|cuDNN error",
        "cuDNN error: rerun with torch.backends.cudnn.enabled=False to confirm, then with "
        "CUDA_LAUNCH_BLOCKING=1; often a bad input (NaN, wrong layout, empty tensor) or an OOM in disguise.",
        CUDA,
    ),
    _p(
        "cuda_error",
        r"CUDA error|CUDA driver error|cuda runtime error|CUBLAS_STATUS_\w+",
        "CUDA errors are reported asynchronously: rerun with CUDA_LAUNCH_BLOCKING=1 to get the "
        "failing kernel, and on CPU to get a readable error.",
        CUDA,
    ),
    _p(
        "index_error",
        r"index -?\d+ is out of bounds|IndexError: index|index out of range",
        "Index out of bounds: print the index tensor's min/max and the indexed dimension's size at the "
        "failing frame; check preprocessing (vocab size, number of classes, padding index).",
    ),
    _p(
        "timeout_hang",
        r"^Timeout\b|Timeout >|Timeout \(\d|timed out after|deadlock",
        "A hang, not a slow test: read the stack of the hung thread in the excerpt (a lock, a "
        "collective, a DataLoader worker, a subprocess). Rerun the test alone with the timeout to see "
        "whether it depends on test order; stress it to measure how often it happens.",
        (processes.ONE_THREAD, processes.SINGLE_PROCESS),
    ),
    _p(
        "segfault",
        r"Segmentation fault|SIGSEGV|Fatal Python error",
        "A native crash: rerun the test alone under gdb -ex run --args python -m pytest ... or with "
        "faulthandler (python -X faulthandler) for the native frame; try CPU vs CUDA and older builds "
        "to localize the kernel.",
    ),
    _p(
        "tolerance_mismatch",
        r"Tensor-likes are not close|Mismatched elements|Greatest (?:absolute|relative) difference",
        "Numerical mismatch: check whether it depends on the seed or the device (nondeterministic "
        "kernels, TF32: torch.backends.cuda.matmul.allow_tf32); rerun with the same seed to decide "
        "deterministic vs flaky before touching tolerances.",
        (numerics.FLOAT64,),
    ),
    _p(
        "nondeterminism",
        None,
        "Flaky: make it deterministic first (seed 003): fix the seeds (torch.manual_seed, random, numpy, "
        "PYTHONHASHSEED), try torch.use_deterministic_algorithms(True) and one thread, then stress the "
        "remaining randomness to measure how often it fails.",
        NONDETERMINISM,
        when=_flaky,
    ),
)


def diagnose(text: str) -> Diagnosis | None:
    """The first catalog pattern that matches `text` (an error message or a log excerpt)."""
    for pattern in CATALOG:
        match = pattern.regex.search(text) if pattern.regex else None
        if match:
            return Diagnosis(pattern.name, pattern.hint, match.group(0))
    return None
