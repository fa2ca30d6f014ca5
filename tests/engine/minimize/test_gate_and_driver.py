"""The gate (`ReductionProblem.consider`), the size order, the driver, the oracle's matching."""

from __future__ import annotations

import ast
import time
from types import SimpleNamespace

import pytest

from app.engine.minimize import (
    CouldNotMinimize,
    ReductionProblem,
    batch,
    code_lines,
    minimize,
    size_key,
    tidy,
)
from app.engine.minimize.driver import Progress, yield_rate
from app.engine.minimize.oracle import (
    SLOW_FACTOR,
    SLOW_FLOOR_S,
    FailureSignature,
    SignatureOracle,
    failure_from_output,
    signature_of,
)
from app.engine.minimize.passes import delete_statements, shrink_int_literals
from app.engine.minimize.session import parse_expected


def counting(predicate):
    seen: list[str] = []

    def evaluate(sources):
        seen.extend(sources)
        return [predicate(s) for s in sources]

    return evaluate, seen


def test_gate_canonicalizes_caches_and_rejects_non_shrinking():
    evaluate, asked = counting(lambda s: "keep" in s)
    problem = ReductionProblem("keep()\nother()\n", evaluate)
    assert problem.consider("keep( )") is True  # canonicalized to `keep()`, smaller: accepted
    assert problem.source == "keep()\n"
    assert problem.consider("keep()") is False  # the current program: not smaller, oracle not asked
    assert problem.consider("keep();  other()") is False  # bigger: not asked
    assert problem.consider("def (") is False and problem.stats.invalid == 1
    assert asked == ["keep()\nother()\n", "keep()\n"]
    assert problem.stats.accepted == 1 and problem.stats.candidates == 2


def test_gate_drops_pass_beside_other_statements_and_keeps_a_lone_one():
    evaluate, asked = counting(lambda s: True)
    problem = ReductionProblem("def f():\n    pass\n    go()\nif x:\n    pass\n", evaluate)
    assert asked == ["def f():\n    go()\nif x:\n    pass\n"]
    assert problem.fresh("def f():\n    go()\n    pass\nif x:\n    pass\n") is None  # the same program


def test_gate_never_asks_twice_about_the_same_candidate():
    evaluate, asked = counting(lambda s: False)
    problem = ReductionProblem("a = 1\nb = 2\n", lambda s: [True] if len(asked) == 0 and not asked.extend(s) else evaluate(s))
    problem.consider("a = 1")
    problem.consider("a  =  1")
    assert asked.count("a = 1\n") == 1


def test_oracle_rejecting_the_original_is_reported_up_front():
    with pytest.raises(CouldNotMinimize):
        ReductionProblem("x = 1", batch(lambda s: False))


def test_size_key_orders_tokens_then_lines_then_backend_then_literals():
    assert size_key("f(a)") < size_key("f(a, b)")
    assert size_key("x = torch.compile(f, backend='eager')") < size_key("x = torch.compile(f)")
    assert size_key("x = torch.compile(f, backend='aot_eager')") < size_key("x = torch.compile(f)")
    # dropping every keyword at once is no simplification if it brings Inductor back
    assert size_key("x = torch.compile(f, fullgraph=True, dynamic=False, backend='eager')") < size_key(
        "x = torch.compile(f)")
    assert size_key("x = torch.ones(8)") < size_key("x = torch.ones(1024)")
    assert size_key("x = torch.ones(1)") < size_key("x = torch.ones(8)")


def test_code_lines_skip_imports_blanks_and_comments():
    assert code_lines("import torch\nfrom a import (b,\n  c)\n\n# hi\nx = 1\ny = 2\n") == 2


def test_tidy_separates_imports_and_definitions():
    assert tidy("import a\nx = 1\ndef f():\n    pass\ny = 2") == "import a\n\nx = 1\n\n\ndef f():\n    pass\n\n\ny = 2\n"


def test_driver_reaches_a_fixpoint_and_reports_progress():
    source = "\n".join(f"v{i} = {i * 100}" for i in range(12)) + "\nboom(v7)\n"
    reports: list[Progress] = []
    result = minimize(source, batch(lambda s: "boom(v7)" in s and "v7 =" in s), progress=reports.append)
    assert ast.unparse(ast.parse(result.source)) == "v7 = 1\nboom(v7)"
    assert reports and reports[-1].lines == 2
    assert result.rounds >= 2 and not result.timed_out


@pytest.mark.parametrize("jobs", [1, 2, 4])
def test_parallel_batches_merge_winners_and_reverify_them(jobs):
    source = "a()\nb()\nc()\nd()\nkeep()\n"
    result = minimize(source, batch(lambda s: "keep()" in s), jobs=jobs, passes=[delete_statements])
    assert result.source == "keep()\n"


def test_merged_winners_that_interact_are_not_accepted():
    # Deleting `a()` alone or `b()` alone keeps the bug; deleting both does not.
    def interesting(s):
        return "keep()" in s and ("a()" in s or "b()" in s)

    result = minimize("a()\nb()\nkeep()\n", batch(interesting), jobs=2, passes=[delete_statements])
    assert interesting(result.source) and code_lines(result.source) == 2


def test_budget_stops_the_driver():
    def slow(sources):
        time.sleep(0.05)
        return [True for _ in sources]

    source = "\n".join(f"x{i} = {i}" for i in range(200))
    result = minimize(source, slow, budget_s=0.3, passes=[shrink_int_literals])
    # one candidate per literal (200 of them) if nothing stopped it; the deadline did
    assert result.timed_out and result.stats.candidates < 100


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_candidate_cap_stops_the_driver_at_exactly_that_many_verdicts(jobs):
    asked: list[str] = []

    def counting(sources):
        asked.extend(sources)
        return [True for _ in sources]

    source = "\n".join(f"x{i} = {i}" for i in range(200))
    result = minimize(source, counting, jobs=jobs, max_candidates=25, passes=[shrink_int_literals])
    # the original's own check is the first of the 25; nothing is asked past the cap
    assert len(asked) == 25 and result.stats.candidates == 25 and not result.timed_out


def test_a_cap_asks_the_same_candidates_with_busy_threads_and_shuffled_completions():
    # Two threads keep the CPU busy and the oracle's delays finish candidates out of order:
    # the candidates asked (not only the count recorded) are the same on every run.
    import random
    import threading

    stop = threading.Event()

    def spin():
        while not stop.is_set():
            sum(range(2000))

    busy = [threading.Thread(target=spin, daemon=True) for _ in range(2)]
    for thread in busy:
        thread.start()
    try:
        runs = []
        for seed in range(3):
            rng = random.Random(seed)
            asked: list[str] = []
            lock = threading.Lock()

            def shuffled(sources, rng=rng, asked=asked, lock=lock):
                with lock:
                    asked.extend(sources)
                    delay = rng.random() * 0.004
                time.sleep(delay)
                return ["v7" in s for s in sources]

            source = "\n".join(f"v{i} = {i * 100} + f(v{i - 1})" for i in range(1, 30)) + "\nboom(v7)\n"
            result = minimize(source, shuffled, jobs=2, max_candidates=25)
            runs.append((sorted(asked), result.source, result.stats.candidates))
    finally:
        stop.set()
    assert all(len(asked) == 25 and candidates == 25 for asked, _, candidates in runs)
    assert runs[0] == runs[1] == runs[2]


def test_the_same_cap_gives_the_same_result_however_slow_the_oracle():
    def interesting(sources, delay=0.0):
        time.sleep(delay * (len(sources[0]) % 4))  # candidates end out of the pass's order
        return ["boom(v7)" in s and "v7 =" in s for s in sources]

    source = "\n".join(f"v{i} = {i * 100} + f(v{i - 1})" for i in range(1, 40)) + "\nboom(v7)\n"
    fast = minimize(source, interesting, jobs=2, max_candidates=15)
    slow = minimize(source, lambda s: interesting(s, delay=0.005), jobs=2, max_candidates=15)
    assert fast.stats.candidates == slow.stats.candidates == 15
    assert fast.source == slow.source and code_lines(fast.source) < 40


def _result(text: str, exit_code=1, signal=None, timed_out=False):
    return SimpleNamespace(output=SimpleNamespace(head=text.encode(), tail=b""), exit_code=exit_code,
                           signal=signal, timed_out=timed_out)


TB = 'Traceback (most recent call last):\n  File "/tmp/repro.py", line 3, in <module>\n    {line}\n{error}\n'


def test_signature_masks_numbers_but_keeps_class_and_words():
    a = failure_from_output(TB.format(line="y = x @ w", error="RuntimeError: mat1 and mat2 shapes cannot be multiplied (32x128 and 64x10)"))
    b = failure_from_output(TB.format(line="x @ w", error="RuntimeError: mat1 and mat2 shapes cannot be multiplied (1x2 and 4x1)"))
    c = failure_from_output(TB.format(line="x @ w", error="RuntimeError: expected scalar type Float but found Double"))
    d = failure_from_output(TB.format(line="x @ w", error="ValueError: mat1 and mat2 shapes cannot be multiplied (1x2 and 4x1)"))
    assert a.matches(b) and not a.matches(c) and not a.matches(d)


def test_messageless_assertion_must_fail_on_the_same_check():
    original = failure_from_output(TB.format(line="assert torch.allclose(f(x), g(x))", error="AssertionError"))
    same = failure_from_output(TB.format(line="assert torch.allclose(a, b)", error="AssertionError"))
    other = failure_from_output(TB.format(line="assert x.shape == y.shape", error="AssertionError"))
    assert original.matches(same) and not original.matches(other)


def test_signals_timeouts_and_success():
    assert signature_of(_result("", exit_code=None, signal=11)) == FailureSignature("signal", code=11, message="memory")
    assert signature_of(_result("", timed_out=True)).kind == "timeout"
    assert signature_of(_result("all good", exit_code=0)) is None


def test_signature_oracle_runs_a_batch_and_rejects_drift():
    outputs = {
        "good": _result(TB.format(line="f()", error="IndexError: index out of range in self")),
        "drift": _result(TB.format(line="f()", error="NameError: name 'emb' is not defined")),
        "passes": _result("", exit_code=0),
    }
    expected = parse_expected("IndexError: index out of range in self")
    oracle = SignatureOracle(lambda source, timeout: outputs[source], expected, timeout_s=5, jobs=2)
    assert oracle(["good", "drift", "passes", "good"]) == [True, False, False, True]
    oracle.close()


def test_parse_expected_forms():
    assert parse_expected("timeout").kind == "timeout"
    assert parse_expected("signal 11") == FailureSignature("signal", code=11, message="memory")
    expected = parse_expected("RuntimeError: must match the size of tensor")
    assert expected.matches(failure_from_output(TB.format(
        line="a + b", error="RuntimeError: The size of tensor a (4) must match the size of tensor b (2)")))
    assert not expected.matches(failure_from_output(TB.format(line="a + b", error="RuntimeError: other")))
    assert not expected.matches(failure_from_output(TB.format(line="a + b", error="ValueError: must match the size of tensor")))


def test_public_api_is_pinned():
    import app.engine.minimize as package
    from app.engine.minimize.passes import PASSES

    assert sorted(package.__all__) == sorted(
        ["CouldNotMinimize", "MinimizeResult", "Progress", "ReductionProblem", "Stats", "batch",
         "code_lines", "count_tokens", "minimize", "shrink", "size_key", "tidy"])
    assert all(p.__doc__ for p in PASSES), "every pass says what it does"
    assert PASSES[0].__name__ == "cut_after_failure"


def test_candidates_may_run_a_few_times_as_long_as_the_latest_interesting_run():
    now = [0.0]
    asked: list[float] = []
    durations = {"original": 2.0, "slow": 30.0, "fast": 0.5}
    failing = _result(TB.format(line="f()", error="IndexError: index out of range in self"))

    def run(source, timeout):
        asked.append(timeout)
        now[0] += durations[source]
        return failing if source != "slow" else _result("", timed_out=True)

    expected = parse_expected("IndexError: index out of range in self")
    oracle = SignatureOracle(run, expected, timeout_s=60, clock=lambda: now[0])
    assert oracle(["original"]) == [True]
    assert oracle(["slow", "fast"]) == [False, True]
    assert asked == [60, SLOW_FACTOR * 2.0, SLOW_FACTOR * 2.0]  # the full timeout, then 4 x 2 s
    oracle(["fast"])
    assert asked[-1] == SLOW_FLOOR_S  # 4 x 0.5 s is below the floor
    hang = SignatureOracle(run, parse_expected("timeout"), timeout_s=60, clock=lambda: now[0])
    hang(["slow"]), hang(["slow"])
    assert asked[-1] == 60  # a hang keeps the full timeout


def test_coarse_passes_run_alone_first_then_order_follows_gain_per_second():
    calls: list[str] = []

    def fine(tree, index):
        """Replace nothing (a fine pass that never gains)."""
        calls.append("fine")
        return iter(())

    def coarse(tree, index):
        """Delete statements."""
        calls.append("coarse")
        return delete_statements(tree, index)

    result = minimize("a()\nb()\nkeep()\n", batch(lambda s: "keep()" in s), passes=[fine, coarse],
                      coarse={coarse})
    assert calls[0] == "coarse"  # the seed order says `fine` first; the big cuts go first
    assert result.source == "keep()\n" and result.gains == {"fine": 0, "coarse": 8}
    assert yield_rate(90, 1.3) > yield_rate(250, 16.0) > yield_rate(0, 0.1) == 0.0


def test_a_pass_that_raises_ends_its_sweep_not_the_minimization():
    def broken(tree, index):
        """Propose one candidate, then fail."""
        yield from delete_statements(tree, index)
        raise AttributeError("'Attribute' object has no attribute 'func'")

    result = minimize("a()\nb()\nkeep()\n", batch(lambda s: "keep()" in s), passes=[broken, delete_statements])
    assert result.source == "keep()\n"


def test_a_candidate_that_fails_only_on_some_draws_must_fail_twice():
    # the fork server reseeds each child: `rsqrt(x)` of a random `x` fails as expected half the time
    failing = _result(TB.format(line="f()", error="IndexError: index out of range in self"))
    draws = {"flaky": iter([failing, _result("", exit_code=0)]), "steady": iter([failing, failing])}
    expected = parse_expected("IndexError: index out of range in self")
    oracle = SignatureOracle(lambda source, timeout: next(draws[source]), expected, timeout_s=5, jobs=2, confirm=True)
    assert oracle(["flaky", "steady"]) == [False, True]
    assert [next(d, None) for d in draws.values()] == [None, None]  # each ran twice
    once = SignatureOracle(lambda source, timeout: failing, expected, timeout_s=5)
    assert once(["flaky"]) == [True]  # without `confirm` (a plain oracle): one run
    hang = {"slow": iter([_result("", timed_out=True)])}
    timeout = SignatureOracle(lambda source, timeout: next(hang[source]), parse_expected("timeout"), timeout_s=5,
                              confirm=True)
    assert timeout(["slow"]) == [True]  # a timeout is not waited for twice


def test_the_repro_stage_confirms_every_interesting_candidate():
    from app.engine.minimize.probe import unprobed
    from app.engine.minimize.session import minimize_repro

    program = "x = 1\nraise IndexError('boom')\n"
    failing = _result('Traceback (most recent call last):\n  File "/tmp/repro.py", line 2, in <module>\n'
                      "    raise IndexError('boom')\nIndexError: boom\n")
    runs: list[str] = []

    def warm(source, timeout):
        runs.append(unprobed(source))
        return failing if "raise" in source else _result("", exit_code=0)

    outcome = minimize_repro(program, run=warm, cold_run=lambda source, timeout: failing, timeout_s=5)
    assert outcome.reproduces and "raise IndexError" in outcome.result.source
    # the original and the result were accepted: each ran twice (a rejected candidate, once); the
    # result was then judged STEADY_RUNS more times, two runs each, twice (after its round,
    # `steadiness`, and at the end, `session.steady`)
    from app.engine.minimize.session import STEADY_RUNS
    assert runs.count(program) == 2 and runs.count(outcome.result.source) == 2 + 2 * 2 * STEADY_RUNS
    assert runs.count("x = 1\n") == 1


def test_the_oracle_tells_the_typeerror_a_rejected_candidate_raised_once():
    # what `arity` learns from: the message as printed, digits and quotes intact
    from app.engine.minimize.probe import unprobed

    missing = 'TypeError: allclose() missing 1 required positional arguments: "other"'
    runs = {"short": _result('Traceback (most recent call last):\n  File "/tmp/repro.py", line 2, in <module>\n'
                             f"    torch.allclose(a)\n{missing}\n"),
            "other": _result('Traceback (most recent call last):\n  File "/tmp/repro.py", line 2, in <module>\n'
                             "    a[9]\nIndexError: index 9 is out of bounds\n")}
    oracle = SignatureOracle(lambda source, timeout: runs[unprobed(source)], parse_expected("ValueError: boom"),
                             timeout_s=5)
    assert oracle(["short", "other"]) == [False, False]
    assert oracle.rejection("short") == missing.removeprefix("TypeError: ")
    assert oracle.rejection("short") == "" and oracle.rejection("other") == ""
