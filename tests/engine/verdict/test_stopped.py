"""What stopped a run before the bug could show (the environment, not the code under test)."""

from __future__ import annotations

from app.engine.verdict.stopped import NETWORK, missing_input, missing_module, stopped_by


def error(exception: str, message: str) -> dict:
    return {"outcome": "error", "exception": exception, "message": message}


def test_each_kind_of_stop_has_its_verdict():
    assert stopped_by(error("AssertionError", "Torch not compiled with CUDA enabled")) == "unavailable-hardware"
    assert stopped_by(error("ModuleNotFoundError", "No module named 'torchvision'")) == "missing-dependency"
    assert stopped_by(error("FileNotFoundError", "[Errno 2] No such file or directory: 'x.pt'"), "torch.load('x.pt')") == (
        "needs-reproduction")
    assert stopped_by(error("URLError", "<urlopen error [Errno -3] Temporary failure in name resolution>")) == "inconclusive"
    assert stopped_by(error("RuntimeError", "shape mismatch")) is None
    assert stopped_by({"outcome": "passed"}) is None


def test_a_missing_file_counts_only_when_the_script_names_it():
    missing = error("FileNotFoundError", "[Errno 2] No such file or directory: '/home/cx/cxtemp/004-args'")
    assert missing_input(missing, 'torch.load("/home/cx/cxtemp/004-args", weights_only=True)') == "/home/cx/cxtemp/004-args"
    assert missing_input(missing, "torch.load(path)") is None  # not the script's own input: some other failure
    printed = error("RuntimeError", "boom") | {"output_tail": "No such file or directory: 'x.pt'\nRuntimeError: boom"}
    assert missing_input(printed, "open('x.pt')") is None  # only the error the run ended with counts
    offline = error("OSError", "We couldn't connect to 'https://huggingface.co' to load this file")
    assert missing_input(offline, "") == NETWORK
    assert missing_module(error("ModuleNotFoundError", "No module named 'transformers.models'")) == "transformers"
