"""The `gosling` command line: one module per command group."""
