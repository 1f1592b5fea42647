"""`python -m gosling.agent.cli` runs the `gosling` command."""

from gosling.agent.cli.main import main

main()
