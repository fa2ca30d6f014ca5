"""The status page: server-rendered HTML, escaped everywhere (repro output is untrusted)."""
