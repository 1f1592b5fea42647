"""Hint files (AGENTS.md, .goosehints, ...): what the project and the user tell the agent.

`load_hint_files` gives the global and project hints for a working directory;
`collect_hints` gives the same with a report of every file used or refused;
`SubdirectoryHintTracker` finds the hints of subdirectories that tool calls touch.
"""

from gosling import quiet_library_loggers
from gosling.hints.gitignore import find_git_root
from gosling.hints.headers import HintHeaders
from gosling.hints.imports import MAX_DEPTH, MAX_EXPANDED_OUTPUT_BYTES, MAX_REFERENCE_OPERATIONS
from gosling.hints.loader import collect_hints, load_hint_files
from gosling.hints.names import DEFAULT_FILENAMES, resolve_filenames
from gosling.hints.reader import MAX_HINT_OUTPUT_BYTES
from gosling.hints.report import HintReport, ImportedFile, LoadedHint, Refusal, RefusalReason
from gosling.hints.tracker import SubdirectoryHintTracker, resolve_to_parent_dir

__all__ = [
    "DEFAULT_FILENAMES",
    "MAX_DEPTH",
    "MAX_EXPANDED_OUTPUT_BYTES",
    "MAX_HINT_OUTPUT_BYTES",
    "MAX_REFERENCE_OPERATIONS",
    "HintHeaders",
    "HintReport",
    "ImportedFile",
    "LoadedHint",
    "Refusal",
    "RefusalReason",
    "SubdirectoryHintTracker",
    "collect_hints",
    "find_git_root",
    "load_hint_files",
    "resolve_filenames",
    "resolve_to_parent_dir",
]

quiet_library_loggers()
