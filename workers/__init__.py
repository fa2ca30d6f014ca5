"""Celery: the app (built from settings by `create_celery`), thin tasks, and how to enqueue."""
