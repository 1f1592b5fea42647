"""The runtime: the reply loop, tools and extensions, permissions, config and the CLI."""
