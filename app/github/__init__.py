"""GitHub: the REST client (githubkit), App/token auth, webhook verification and reading."""
