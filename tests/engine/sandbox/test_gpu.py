"""GPU facts from the driver's /proc files (fixtures: the texts an NVIDIA host shows), and the
launch of a GPU run: device nodes and /sys bound, no RLIMIT_AS."""

from __future__ import annotations

import stat

from app.engine.sandbox.gpu import driver_library_dirs, gpu_facts, parse_driver_version, parse_smi_cuda, parse_smi_query
from app.engine.sandbox.policy import Limits, SandboxSpec, _prlimit_args, bwrap_launch, sandbox_env

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


def test_without_proc_files_the_facts_come_from_nvidia_smis_query(tmp_path):
    smi = tmp_path / "nvidia-smi"
    smi.write_text("#!/bin/sh\nif [ \"$1\" = --query-gpu=name,driver_version ]; then echo 'NVIDIA H200, 580.159.04'; "
                   f"else printf '%s' '{SMI}'; fi\n")
    smi.chmod(smi.stat().st_mode | stat.S_IXUSR)
    facts = gpu_facts(tmp_path / "no-proc", smi=str(smi))
    assert facts.describe() == "1 x NVIDIA H200 (driver 580.159.04, CUDA 12.4 supported)"
    assert parse_smi_query("NVIDIA H200, 580.1\nNVIDIA H200, 580.1\n") == (("NVIDIA H200", "NVIDIA H200"), "580.1")
    silent = tmp_path / "silent-smi"
    silent.write_text("#!/bin/sh\nexit 9\n")
    silent.chmod(silent.stat().st_mode | stat.S_IXUSR)
    assert gpu_facts(tmp_path / "no-proc", smi=str(silent)) is None


def test_a_gpu_run_finds_the_driver_library_the_worker_finds_on_its_library_path(tmp_path, monkeypatch):
    driver = tmp_path / "nvidia" / "lib64"
    driver.mkdir(parents=True)
    (driver / "libcuda.so.1").write_bytes(b"")
    other = tmp_path / "other"
    other.mkdir()
    monkeypatch.setenv("LD_LIBRARY_PATH", f"{other}:relative:{driver}")
    assert driver_library_dirs() == (str(driver),)
    gpu = bwrap_launch(SandboxSpec(gpu=True), None, {"r.py": b""}, ["python", "r.py"], 10).argv
    assert ("--setenv", "LD_LIBRARY_PATH", str(driver)) in zip(gpu, gpu[1:], gpu[2:])
    assert ("--ro-bind", str(driver), str(driver)) in zip(gpu, gpu[1:], gpu[2:])
    cpu = bwrap_launch(SandboxSpec(), None, {"r.py": b""}, ["python", "r.py"], 10).argv
    assert "LD_LIBRARY_PATH" not in cpu and str(driver) not in cpu


def test_a_gpu_run_sees_the_workers_gpus_and_a_cpu_run_sees_none(monkeypatch):
    # An empty CUDA_VISIBLE_DEVICES hides every GPU: on the first GPU host every sandboxed CUDA
    # run failed with "No CUDA GPUs are available" while torch saw the H200 outside.
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert "CUDA_VISIBLE_DEVICES" not in sandbox_env(SandboxSpec(gpu=True))
    assert sandbox_env(SandboxSpec())["CUDA_VISIBLE_DEVICES"] == ""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1,3")
    assert sandbox_env(SandboxSpec(gpu=True))["CUDA_VISIBLE_DEVICES"] == "1,3"
    assert sandbox_env(SandboxSpec())["CUDA_VISIBLE_DEVICES"] == ""


def test_a_driver_directory_is_bound_unless_a_system_directory_already_shows_it(monkeypatch):
    monkeypatch.setattr("app.engine.sandbox.policy.driver_library_dirs",
                        lambda: ("/usr/local/nvidia/lib64", "/lib64/nvidia", "/libcuda-drivers", "/opt/nvidia/lib"))
    argv = bwrap_launch(SandboxSpec(gpu=True), None, {"r.py": b""}, ["python", "r.py"], 10).argv
    bound = {argv[i + 1] for i, a in enumerate(argv) if a == "--ro-bind"}
    assert {"/libcuda-drivers", "/opt/nvidia/lib"} <= bound  # not under /lib: its own bind
    assert not {"/usr/local/nvidia/lib64", "/lib64/nvidia"} & bound
