"""Nightlies as a range: one a day, ordered between two builds by their PEP 440 versions."""

from __future__ import annotations

from app.engine.envs.index import Wheel
from app.engine.envs.nightlies import Nightly, between, daily, source_of_subject


def wheel(version: str) -> Wheel:
    name = f"torch-{version.replace('+', '%2B')}-cp311-cp311-linux_x86_64.whl"
    return Wheel(name, f"https://download.pytorch.org/whl/nightly/{name}", version)


# As the nightly index lists them: several variants a day, releases beside them.
WHEELS = [wheel(v) for v in (
    "2.13.0.dev20260110+cpu", "2.13.0.dev20260110+cu126", "2.13.0+cpu",
    "2.14.0.dev20260301+cu126", "2.14.0.dev20260301+cpu", "2.14.0.dev20260302+cpu",
    "2.14.0.dev20260304+cu126", "2.14.0.dev20260305+cpu", "2.14.0+cpu", "2.15.0.dev20260601+cpu",
)]


def test_one_nightly_a_day_in_the_variant_a_cpu_worker_prefers():
    days = daily(WHEELS)
    assert [(n.date, n.version) for n in days] == [
        ("2026-01-10", "2.13.0.dev20260110+cpu"), ("2026-03-01", "2.14.0.dev20260301+cpu"),
        ("2026-03-02", "2.14.0.dev20260302+cpu"), ("2026-03-04", "2.14.0.dev20260304+cu126"),
        ("2026-03-05", "2.14.0.dev20260305+cpu"), ("2026-06-01", "2.15.0.dev20260601+cpu")]
    assert days[1].label == "nightly 2026-03-01"


def test_a_gpu_worker_keeps_only_accelerator_nightlies():
    assert [n.version for n in daily(WHEELS, gpu=True)] == ["2.13.0.dev20260110+cu126", "2.14.0.dev20260301+cu126",
                                                           "2.14.0.dev20260304+cu126"]


def test_the_nightlies_between_two_releases_are_the_next_release_s_development_builds():
    found = between(daily(WHEELS), "2.13.0+cpu", "2.14.0")
    assert [n.date for n in found] == ["2026-03-01", "2026-03-02", "2026-03-04", "2026-03-05"]


def test_between_a_release_and_a_nightly_and_between_two_nightlies():
    days = daily(WHEELS)
    assert [n.date for n in between(days, "2.13.0", "2.14.0.dev20260304+cu126")] == ["2026-03-01", "2026-03-02"]
    assert [n.date for n in between(days, "2.14.0.dev20260301", "2.14.0.dev20260305")] == ["2026-03-02", "2026-03-04"]


def test_no_range_when_a_version_is_unreadable_or_out_of_order():
    days = daily(WHEELS)
    assert between(days, "2.14.0", "2.13.0") == []
    assert between(days, "local", "2.14.0") == []
    assert between(days, "2.13.0", "2.13.1") == []  # a patch release: cherry-picks, no nightlies


def test_the_source_of_a_nightly_branch_commit_is_the_commit_its_subject_names():
    sha = "0123456789abcdef0123456789abcdef01234567"
    assert source_of_subject(f"2026-03-05 nightly release ({sha})") == sha
    assert source_of_subject("Fix the scale kernel (#123)") is None


def test_a_nightly_round_trips_through_json():
    night = daily(WHEELS)[2]
    assert Nightly.from_dict(night.to_dict()) == night
    assert night.wheel.dev_date == "20260302"
