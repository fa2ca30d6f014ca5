"""GPU facts from the driver's /proc files (fixtures: the texts an NVIDIA host shows), and the
launch of a GPU run: device nodes and /sys bound, no RLIMIT_AS."""

from __future__ import annotations

import stat

from app.engine.sandbox.gpu import gpu_facts, parse_driver_version, parse_smi_cuda
from app.engine.sandbox.policy import Limits, SandboxSpec, _prlimit_args, bwrap_launch

VERSION = ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build  "
           "(dvs-builder@U16-I3-B03-4-3)  Tue Mar  5 22:15:33 UTC 2024\nGCC version:  gcc version 12.3.0\n")
INFORMATION = "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 18\nGPU UUID: \t GPU-5c1e\nBus Type: \t PCIe\n"
SMI = "| NVIDIA-SMI 550.54.15     Driver Version: 550.54.15     CUDA Version: 12.4     |\n"


def test_facts_come_from_the_drivers_proc_files(tmp_path):
    assert gpu_facts(tmp_path / "absent") is None
    (tmp_path / "gpus" / "0000:1b:00.0").mkdir(parents=True)
    (tmp_path / "gpus" / "0000:1b:00.0" / "information").write_text(INFORMATION)
    (tmp_path / "version").write_text(VERSION)
    smi = tmp_path / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\nprintf '%s' '{SMI}'\n")
    smi.chmod(smi.stat().st_mode | stat.S_IXUSR)
    facts = gpu_facts(tmp_path, smi=str(smi))
    assert facts.describe() == "1 x NVIDIA H100 80GB HBM3 (driver 550.54.15, CUDA 12.4 supported)"
    assert parse_driver_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19") == \
        "535.129.03"
    assert parse_smi_cuda(SMI) == "12.4"


def test_a_gpu_run_has_no_address_space_limit_and_sees_the_sys_paths_cuda_reads(monkeypatch):
    assert _prlimit_args(Limits(memory_mb=4096), 10, None, 64)[1] == f"--as={4096 << 20}"
    assert _prlimit_args(Limits(memory_mb=4096), 10, None, 64, gpu=True)[1] == "--as=unlimited"
    monkeypatch.setattr("app.engine.sandbox.policy.glob.glob", lambda pattern: ["/dev/nvidia0", "/dev/nvidiactl",
                                                                                "/dev/nvidia-uvm"])
    launch = bwrap_launch(SandboxSpec(gpu=True), None, {"r.py": b""}, ["python", "r.py"], 10)
    argv = launch.argv
    assert argv[argv.index("--as=unlimited")] == "--as=unlimited"
    binds = {argv[i + 1] for i, a in enumerate(argv) if a == "--dev-bind"}
    assert binds == {"/dev/nvidia0", "/dev/nvidiactl", "/dev/nvidia-uvm"}
    assert ("--ro-bind", "/sys/devices", "/sys/devices") in zip(argv, argv[1:], argv[2:])
    cpu = bwrap_launch(SandboxSpec(), None, {"r.py": b""}, ["python", "r.py"], 10).argv
    assert "/sys/devices" not in cpu and not any(a.startswith("--as=unlimited") for a in cpu)
