"""`python -m gosling` runs the `gosling` command."""

from gosling.agent.cli.launch import main

main()
