"""`failures.md`: the status page's view of a CI ingest, one row per failure with its count,
its classification and why it did or did not open a CI job (the run page links each signature's
page: markdown here keeps only http(s) links, `app.web.render`)."""

from __future__ import annotations

from typing import Any

from app.engine.cilogs.fingerprint import short_fingerprint


def _cell(text: str, limit: int = 120) -> str:
    first = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    first = first if len(first) <= limit else first[: limit - 1] + "…"
    # Keeps the table a table; HTML is the renderer's to escape (the status page does).
    return first.replace("|", "\\|").replace("`", "'")


def failures_markdown(rows: list[dict[str, Any]], wf: dict[str, Any]) -> str:
    title = f"[{wf.get('name') or 'workflow run'} #{wf['id']}]({wf['html_url']})"
    lines = [f"## Failures of {title}", ""]
    if not rows:
        return "\n".join(lines + ["No failing test found in the logs."]) + "\n"
    lines += ["| job | test | kind | error | runs | class | CI job | signature |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        error = f"`{_cell(r['exception'], 60)}` {_cell(r['message'])}".strip()
        linked = f"#{r['linked_run_id']}" if r.get("linked_run_id") else ""
        label = (r.get("classification") or {}).get("label", "")
        sig = f"`{short_fingerprint(r['signature'])}`"
        lines.append(f"| {_cell(r['job'], 60)} | `{_cell(r['test'], 100)}` | {r['kind']} | {error} | {r['count']} "
                     f"| {label} | {linked} | {sig} |")
    why = [(r["test"] or r["job"], r["classification"], r.get("decision", "")) for r in rows if r.get("classification")]
    if why:
        lines += ["", "### Classification", ""]
        for test, classification, decision in why:
            evidence = "; ".join(_cell(e, 300) for e in classification.get("evidence", []))
            lines.append(f"- `{_cell(test, 100)}`: **{classification.get('label', '')}**: {evidence}"
                         + (f". CI job: {_cell(decision, 200)}" if decision else ""))
    hints = [(r["test"] or r["job"], r["hint"]) for r in rows if r.get("hint")]
    if hints:
        lines += ["", "### Hints", ""] + [f"- `{_cell(test, 100)}`: {hint}" for test, hint in hints]
    return "\n".join(lines) + "\n"
