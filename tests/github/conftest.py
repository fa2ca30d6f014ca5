"""Fixtures of the GitHub client tests: the fake REST server."""

from tests.fakes.fake_github import fake_github  # noqa: F401  (pytest fixture)
