"""Saved issues for the offline GitHub stand-in: one reader, clear errors, and what it records."""

from __future__ import annotations

import json

import pytest

from app.cli.offline_github import SAVED_SHAPE, OfflineGitHub, load_saved

ISSUE = {"number": 5, "title": "bug", "body": "it fails", "html_url": "https://github.com/o/r/issues/5"}
COMMENT = {"body": "same here", "user": {"login": "bob"}}


def test_a_saved_issue_with_its_comments_is_read(tmp_path):
    path = tmp_path / "issue.json"
    path.write_text(json.dumps({"issue": ISSUE, "comments": [COMMENT]}))
    assert load_saved(path) == (ISSUE, [COMMENT])


def test_a_bare_issue_object_has_no_comments(tmp_path):
    path = tmp_path / "issue.json"
    path.write_text(json.dumps(ISSUE))
    assert load_saved(path) == (ISSUE, [])


@pytest.mark.parametrize("content, says", [
    (None, "no such file"),
    ("{not json", "not JSON (Expecting property name enclosed in double quotes at line 1)"),
    (b"\xff{}", "not UTF-8 text (invalid start byte at byte 0)"),
    ("[1, 2]", "not a JSON object"),
    ('{"foo": 1}', 'not a GitHub issue: no "title" or "body" (keys: foo)'),
    ('{"issue": [1]}', '"issue" is not an object'),
    ('{"issue": {"title": "t", "body": "b"}}', 'needs a "number" or an "html_url"'),
    ('{"issue": {"title": "t", "number": 1}, "comments": [1]}', '"comments" must be a list of comment objects'),
])
def test_what_is_not_a_saved_issue_is_refused_with_a_message(tmp_path, content, says):
    path = tmp_path / "issue.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    with pytest.raises(ValueError) as refused:
        load_saved(path)
    assert says in str(refused.value)


def test_shape_errors_show_the_expected_shape(tmp_path):
    path = tmp_path / "issue.json"
    path.write_text("[]")
    with pytest.raises(ValueError, match="expected") as refused:
        load_saved(path)
    assert str(refused.value).endswith(SAVED_SHAPE)


def test_a_directory_is_not_a_saved_issue(tmp_path):
    with pytest.raises(ValueError, match="a directory, not a saved issue file"):
        load_saved(tmp_path)


def test_the_stand_in_serves_the_issue_and_records_writes_instead_of_posting():
    github = OfflineGitHub(ISSUE, [COMMENT])
    assert github.get_issue("o/r", 5) == ISSUE and github.list_issue_comments("o/r", 5) == [COMMENT]
    github.upsert_comment("o/r", 5, "<!-- m -->", "first")
    github.upsert_comment("o/r", 5, "<!-- m -->", "second")  # the same marker replaces, as on GitHub
    github.update_labels("o/r", 5, ["a"], ["b"])
    github.close_issue("o/r", 5, "not_planned")
    assert [w.action for w in github.writes] == ["comment", "labels", "close"]
    assert github.comment == "second" and github.labels == {"add": ["a"], "remove": ["b"]}
    assert github.closed == "not_planned"
