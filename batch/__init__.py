"""`gosling batch`: many headless runs on a local process pool or on Ray (see README.md)."""
