"""The deployment files: compose parses and builds from Dockerfiles that exist; CI runs .ci/run."""

from __future__ import annotations

import os
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_compose_services_and_their_dockerfiles():
    services = compose()["services"]
    assert {"postgres", "redis", "api", "worker", "worker-repro", "worker-gpu"} <= set(services)
    for name, service in services.items():
        if "build" in service:
            dockerfile = ROOT / service["build"].get("context", ".") / service["build"]["dockerfile"]
            assert dockerfile.is_file(), f"{name} builds from missing {dockerfile}"


def test_workers_consume_the_right_queues():
    services = compose()["services"]
    assert services["worker"]["command"][:4] == ["scrub", "worker", "-Q", "default"]
    assert services["worker-repro"]["command"][:4] == ["scrub", "worker", "-Q", "repro-cpu"]
    assert services["worker-gpu"]["command"][:4] == ["scrub", "worker", "-Q", "repro-gpu"]


def test_gpu_worker_is_a_profile_on_the_nvidia_runtime():
    gpu = compose()["services"]["worker-gpu"]
    assert gpu["profiles"] == ["gpu"] and gpu["runtime"] == "nvidia"
    [device] = gpu["deploy"]["resources"]["reservations"]["devices"]
    assert device["driver"] == "nvidia" and "gpu" in device["capabilities"]
    assert "nvidia/cuda" in (ROOT / gpu["build"]["dockerfile"]).read_text()


def test_services_share_postgres_and_redis():
    services = compose()["services"]
    for name in ("api", "worker"):
        env = services[name]["environment"]
        assert env["SCRUB_DATABASE_URL"].startswith("postgresql+psycopg://") and env["SCRUB_BROKER_URL"].startswith("redis://")


def test_the_hosts_that_run_untrusted_code_get_the_broker_and_no_credential():
    """The trust split (docs/security.md): a repro worker would refuse them anyway."""
    from app.cli.service import CREDENTIALS

    services = compose()["services"]
    for name in ("worker-repro", "worker-gpu", "releases"):
        env = services[name]["environment"]
        assert env["SCRUB_BROKER_URL"].startswith("redis://"), name
        assert not set(env) & set(CREDENTIALS.values()), name
        assert not any(w in key for key in env for w in ("TOKEN", "SECRET", "KEY", "PASSWORD")), name
        assert services[name]["volumes"] == ["repro-data:/data"], name  # not the trusted side's volume
    assert services["worker-gpu"]["environment"]["SCRUB_GPU"] == "true"


def test_ci_workflow_runs_the_ci_script():
    workflow = yaml.safe_load((ROOT / ".github/workflows/ci.yml").read_text())
    steps = [step for job in workflow["jobs"].values() for step in job["steps"]]
    assert any(step.get("run", "").strip() == "./.ci/run" for step in steps)
    assert os.access(ROOT / ".ci/run", os.X_OK)


def test_compose_provisions_the_listed_torch_releases_before_workers_start():
    import subprocess

    services = compose()["services"]
    releases = services["releases"]
    assert "SCRUB_TORCH_RELEASES" in releases["environment"]
    assert {"repro-data:/data"} <= set(releases["volumes"])  # the repro workers' data dir: /data/envs/<version>
    assert services["worker-repro"]["depends_on"]["releases"] == {"condition": "service_completed_successfully"}
    script = releases["command"][2].replace("$$", "$")  # compose's escape for a literal $
    for listed, expected in (("", ""), ("2.13.0 2.14.1", "env add 2.13.0 2.14.1")):
        shell = subprocess.run(["sh", "-c", script.replace("scrub ", "echo ")], capture_output=True, text=True,
                               env={"PATH": os.environ["PATH"], "SCRUB_TORCH_RELEASES": listed})
        assert shell.returncode == 0 and shell.stdout.strip() == expected
