"""The redactor masks configured secrets and secret-shaped strings, and nothing else."""

from __future__ import annotations

from types import SimpleNamespace

from app.redact import MASK, RedactedWrites, Redactor, redactor_for

PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAuQ3tB0dyWf5ZvW0Q1lQ8t1A9cF0o2y8m6d5K3jV0Xc4e7hJk\n"
    "Zp1x9wq2Yr4sT6uV8wX0yZ2aB4cD6eF8gH0iJ2kL4mN6oP8qR0sT2uV4wX6yZ8a\n"
    "-----END RSA PRIVATE KEY-----"
)


def _settings(**values):
    base = dict(webhook_secret="", github_token="", github_private_key="", database_url="", broker_url="")
    return SimpleNamespace(**{**base, **values})


def test_configured_values_are_masked():
    redact = redactor_for(_settings(webhook_secret="whsec-123456", github_token="tok-abcdef-987",
                                    database_url="postgresql+psycopg://scrub:db-pass-42@db/scrub"))
    text = "a whsec-123456 b tok-abcdef-987 c db-pass-42 d"
    assert redact.text(text) == f"a {MASK} b {MASK} c {MASK} d"


def test_private_key_whole_and_line_by_line(tmp_path):
    key_file = tmp_path / "app.pem"
    key_file.write_text(PEM)
    for configured in (PEM, PEM.replace("\n", "\\n"), str(key_file)):
        redact = redactor_for(_settings(github_private_key=configured))
        one_line = PEM.splitlines()[2]
        assert one_line not in redact.text(f"leaked: {one_line}")
    assert "MIIEow" not in Redactor().text(f"x {PEM} y")  # the PEM shape alone is enough


def test_token_shapes_and_url_credentials():
    redact = Redactor()
    for token in ("ghp_" + "a" * 36, "gho_" + "B" * 36, "ghu_" + "x1" * 18, "ghs_" + "0f" * 18, "ghr_" + "Z" * 40,
                  "github_pat_11ABCDEFG0" + "x" * 60):
        assert token not in redact.text(f"token={token};"), token
    assert redact.text("https://x-access-token:s3cr3t@github.com/o/r.git") == f"https://{MASK}@github.com/o/r.git"


def test_environment_variables_named_secret():
    redact = redactor_for(None, {"SCRUB_WEBHOOK_SECRET": "from-env-secret", "MY_API_TOKEN": "tok-from-env",
                                 "PATH": "/usr/bin:/bin", "SCRUB_REPRO_TIMEOUT": "120"})
    assert redact.text("from-env-secret tok-from-env /usr/bin:/bin 120") == f"{MASK} {MASK} /usr/bin:/bin 120"


def test_ordinary_text_is_untouched_and_short_values_are_not_masked():
    redact = redactor_for(_settings(webhook_secret="s"))
    text = "ZeroDivisionError: division by zero at tests/test_calc.py:9 (ghp_ is a prefix)"
    assert redact.text(text) == text


def test_nested_values_and_types_are_kept():
    redact = Redactor(["secret-value"])
    value = {"a": ["x secret-value", 3, None, ("secret-value",)], "secret-value": True, "n": 1.5}
    assert redact.value(value) == {"a": [f"x {MASK}", 3, None, (MASK,)], MASK: True, "n": 1.5}


def test_redacted_writes_mask_only_the_named_methods():
    calls = []

    class Port:
        def upsert_comment(self, repo, number, marker, body):
            calls.append(("upsert", body))

        def get_issue(self, repo, number):
            return {"body": "secret-value"}

    port = RedactedWrites(Port(), Redactor(["secret-value"]), ["upsert_comment"])
    port.upsert_comment("o/r", 1, "<!-- m -->", body="see secret-value")
    assert calls == [("upsert", f"see {MASK}")]
    assert port.get_issue("o/r", 1) == {"body": "secret-value"}  # reads are not touched
