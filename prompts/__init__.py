"""prompts package."""
