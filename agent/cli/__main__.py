"""`python -m agent.cli` runs the `gosling` command."""

from agent.cli.main import main

main()
