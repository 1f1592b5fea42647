"""hints package."""
