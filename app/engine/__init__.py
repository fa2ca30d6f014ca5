"""The pure domain: plain Python over plain data.

No web framework, queue, database or settings imports here (an import-linter contract in
pyproject.toml enforces it). Every stage is testable without Redis, a database or the
network; shells pass configuration down as arguments.
"""
