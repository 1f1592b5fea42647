"""The interactive session (`gosling session`): input, rendering, slash commands, status."""
