"""The reproduce stage's evidence, without the sandbox: commenters' roles and the witness reason."""

from __future__ import annotations

from types import SimpleNamespace

from app.engine.issue.repro import Repro
from app.pipelines.issue import evidence
from app.pipelines.issue.state import IssueState

ROLES = ("admin", "maintain", "write", "triage")


class Port:
    def __init__(self, roles: dict[str, str], broken: set[str] = frozenset()):
        self.roles, self.broken, self.asked = roles, broken, []

    def permission(self, repo: str, login: str) -> str:
        self.asked.append(login)
        if login in self.broken:
            raise RuntimeError("502")
        return self.roles.get(login, "none")


def ctx(port) -> SimpleNamespace:
    return SimpleNamespace(github=port, params={"repo": "o/r", "issue": 1}, log=lambda message: None)


def repro(author: str, op: bool = False) -> Repro:
    return Repro("print(1)\n", author, "u", "t", op, trusted=op)


def test_only_triage_or_higher_is_trusted_and_an_unanswered_check_is_no_role():
    port = Port({"tina": "triage", "rita": "read", "wes": "write"}, broken={"bob"})
    found = evidence.trusted_commenters(ctx(port), [repro("op", True), repro("tina"), repro("rita"), repro("wes"),
                                                    repro("bob"), repro("tina")], "op", ROLES)
    assert found == ["tina", "wes"] and port.asked == ["tina", "rita", "wes", "bob"]  # each asked once, never the poster
    assert evidence.trusted_commenters(ctx(None), [repro("tina")], "op", ROLES) == []


def test_a_strangers_script_is_never_a_witness():
    state = IssueState(reported=None)
    found = evidence.witness(ctx(Port({})), state, repro("mallory"), older=None)
    assert not found.holds and "someone other than the reporter" in found.why
