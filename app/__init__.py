"""Scrubbot: reproduce, classify, bisect and minimize bug reports and CI failures."""
