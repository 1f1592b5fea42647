"""context_mgmt package."""
