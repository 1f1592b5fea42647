"""OpenTelemetry traces of turns, model calls, tool calls and context steps (see README.md)."""
