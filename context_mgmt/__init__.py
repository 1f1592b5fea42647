"""Context management: token counting, compaction, tool-pair summaries, masking, MOIM."""
