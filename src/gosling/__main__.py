"""`python -m gosling` runs the `gosling` command."""

from gosling.agent.cli.main import main

main()
