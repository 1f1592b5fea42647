"""`python -m gosling.agent.cli` runs the `gosling` command."""

from gosling.agent.cli.launch import main

main()
