"""`gosling acp`: gosling as an Agent Client Protocol agent for editors (see README.md).

Nothing is imported here: the SDK loads only when the command runs."""
