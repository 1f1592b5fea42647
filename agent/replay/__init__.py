"""`gosling context replay`: a recorded session replayed through the real reply loop.

`run.py` drives `Agent.reply` turn by turn with the recorded model and tools of
`recorded.py`; `results.py` holds what it reports; `stub_summarizer.py` answers compaction and
tool-pair requests without a model. It sits inside `agent` because it drives the loop (and
reads transcripts through `sessions.importers`).
"""
