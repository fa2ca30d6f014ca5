"""Markdown people read (`render`, over the Jinja2 templates in `templates/`): the issue comment
(seed 001 step 8), notices, and the run report (seed 002's template). Everything untrusted is
fenced or escaped here."""

from app.engine.report.render import IssueComment, RunReport, render_issue_comment, render_notice, render_run_report

__all__ = ["IssueComment", "RunReport", "render_issue_comment", "render_notice", "render_run_report"]
