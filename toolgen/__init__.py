"""Generating domains from API specs."""
