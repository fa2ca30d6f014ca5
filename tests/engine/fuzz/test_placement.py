"""Choosing the test file that covers the operation."""

from app.engine.fuzz.placement import choose_test_file


def _tree(root, files):
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_the_file_naming_the_operation_most_wins_and_compilers_win_for_compiling_programs(tmp_path):
    _tree(tmp_path, {"test/test_ops.py": "def test_gelu(): gelu(); gelu()\n",
                     "test/inductor/test_torchinductor.py": "def test_gelu(): gelu()\n",
                     "test/test_nn.py": "def test_relu(): relu()\n"})
    assert choose_test_file(tmp_path, ("gelu",), compiles=False, style="pytorch").path == "test/test_ops.py"
    assert choose_test_file(tmp_path, ("gelu",), compiles=True,
                            style="pytorch").path == "test/inductor/test_torchinductor.py"


def test_defaults_when_nothing_names_the_operation(tmp_path):
    _tree(tmp_path, {"test/test_ops.py": "x\n", "test/inductor/test_torchinductor.py": "x\n"})
    assert choose_test_file(tmp_path, ("zeta",), compiles=True, style="pytorch").path == \
        "test/inductor/test_torchinductor.py"
    assert choose_test_file(tmp_path, ("zeta",), compiles=False, style="pytorch").path == "test/test_ops.py"
    placed = choose_test_file(tmp_path, ("zeta",), compiles=False, style="pytest")
    assert (placed.path, placed.exists) == ("tests/test_fuzz_repros.py", False)


def test_configured_file_and_symlinks(tmp_path):
    _tree(tmp_path, {"outside.py": "gelu gelu gelu\n", "tests/test_a.py": "gelu\n"})
    (tmp_path / "tests/test_link.py").symlink_to(tmp_path / "outside.py")
    assert choose_test_file(tmp_path, ("gelu",), compiles=False, style="pytest").path == "tests/test_a.py"
    assert choose_test_file(tmp_path, ("gelu",), compiles=False, style="pytest",
                            configured="tests/test_b.py").path == "tests/test_b.py"


def test_a_compiler_bug_goes_to_the_repositorys_fuzzer_repro_file(tmp_path):
    """PyTorch keeps TorchFuzz's findings in one file ("Fuzzer-discovered eager/compile
    divergence test cases", class TestFuzzerCompileIssues): a compiled failure belongs there,
    an eager failure with the operator's own tests."""
    _tree(tmp_path, {"test/test_ops.py": "def test_gather(): gather(); gather()\n",
                     "test/inductor/test_torchinductor.py": "def test_gather(): gather()\n",
                     "test/inductor/test_fuzzer_repros.py": '"""Fuzzer-discovered eager/compile divergence test '
                                                            'cases."""\nclass TestFuzzerCompileIssues: pass\n',
                     "test/test_fuzz_inputs.py": '"""Input fuzzing helpers."""\n'})
    compiled = choose_test_file(tmp_path, ("gather",), compiles=True, style="pytorch")
    assert (compiled.path, compiled.reason) == ("test/inductor/test_fuzzer_repros.py",
                                                "the repository's file of fuzzer-found compiler bugs")
    assert choose_test_file(tmp_path, ("gather",), compiles=False, style="pytorch").path == "test/test_ops.py"
