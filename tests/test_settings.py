"""One configuration story: defaults < the config file < environment variables; a data dir
that does not depend on the current directory (the old `./.scrub` is still found)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.settings import Settings, config_files, default_data_dir


@pytest.fixture
def clean(tmp_path, monkeypatch):
    for name in ("SCRUB_DATA_DIR", "SCRUB_CONFIG", "SCRUB_TRIGGER_LABEL", "SCRUB_REPRO_TIMEOUT", "XDG_DATA_HOME",
                 "XDG_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return tmp_path


def test_the_data_dir_is_the_same_from_any_directory(clean, monkeypatch):
    expected = clean / "home" / ".local" / "share" / "scrubbot"
    assert Settings().data_dir == expected
    monkeypatch.chdir(clean)
    assert Settings().data_dir == expected
    monkeypatch.setenv("XDG_DATA_HOME", str(clean / "xdg"))
    assert Settings().data_dir == clean / "xdg" / "scrubbot"


def test_an_old_dot_scrub_in_this_directory_is_still_found(clean):
    (Path.cwd() / ".scrub").mkdir()
    assert default_data_dir() == (Path.cwd() / ".scrub").resolve() and Settings().data_dir == default_data_dir()


def test_the_environment_wins_over_the_config_file_which_wins_over_defaults(clean, monkeypatch):
    (Path.cwd() / ".env").write_text("SCRUB_TRIGGER_LABEL=from-dotenv\nSCRUB_REPRO_TIMEOUT=33\nPOSTGRES_PASSWORD=x\n")
    user = clean / "home" / ".config" / "scrubbot"
    user.mkdir(parents=True)
    (user / "scrub.env").write_text("SCRUB_TRIGGER_LABEL=from-user-file\nSCRUB_DATA_DIR=/srv/scrub\n")
    settings = Settings()
    assert (settings.trigger_label, settings.repro_timeout, settings.data_dir) == ("from-dotenv", 33.0, Path("/srv/scrub"))
    monkeypatch.setenv("SCRUB_TRIGGER_LABEL", "from-env")
    assert Settings().trigger_label == "from-env"
    assert Settings(trigger_label="given").trigger_label == "given"


def test_scrub_config_names_the_one_file_read(clean, monkeypatch):
    (Path.cwd() / ".env").write_text("SCRUB_TRIGGER_LABEL=from-dotenv\n")
    chosen = clean / "elsewhere.env"
    chosen.write_text("SCRUB_TRIGGER_LABEL=from-chosen\n")
    monkeypatch.setenv("SCRUB_CONFIG", str(chosen))
    assert config_files() == (chosen,) and Settings().trigger_label == "from-chosen"
    monkeypatch.setenv("SCRUB_CONFIG", str(clean / "missing.env"))
    with pytest.raises(ValueError, match="SCRUB_CONFIG"):
        Settings()
