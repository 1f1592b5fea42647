"""Hooks: commands the user configured, run at events of a session (see README.md)."""
