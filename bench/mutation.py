"""Mutation testing: how many realistic bugs, put in one at a time, the tests of an area catch.

python -m bench.mutation [--sample N [--seed S]] [AREA ...]     (or `python3 dev.py mutate ...`)

Each area names the modules that hold its decisions and the tests that should catch a bug in
them. cosmic-ray (the `mutate` extra) writes each mutant into the real file, one at a time,
and runs that area's tests (`-x`, no shuffling), niced; the file is restored after every
mutant, and restored again here whatever happens. With pytest-cov (also in the extra), one
run of the area's tests under coverage first records which tests run each statement, and a
mutant runs only those (`bench.mutation_select`; a statement no recorded test ran gets the
whole command); every survivor is then run again under the whole command, so the selection
only saves time and never turns a caught mutant into a survivor. Operators that make noise
rather than bugs (arithmetic swaps on every `+`, `is` for `==`, removed decorators, renamed
variables) are left out. The kill rate per area goes to `bench/results.json` under
`mutation`, with every survivor (file:line and operator), split into those judged
equivalent or harmless (`JUDGED`, with why) and those not judged yet. The target is met by
`kill_rate_of_killable`: the killed share of the mutants not judged equivalent (or
unreachable), since no test can tell those from the code; a survivor judged harmless still
counts against it. `kill_rate` is the plain share of all mutants.

`--sample N` runs N mutants of each area drawn at random (seeded: `--seed S`, default 0,
draws the same ones again) instead of all of them, for an area too slow to run whole (batch's
tests start worker processes); the figures then say how many there were in all and give the
95% Wilson interval of the killable kill rate beside the sampled one.

Slow (each mutant is a pytest run): not part of `.ci/run`. Run one area at a time on a shared
machine, and never while other tests run in the same checkout: the mutant is on disk.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shlex
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).resolve().parent / "results.json"


@dataclass(frozen=True)
class Area:
    modules: tuple[str, ...]
    tests: tuple[str, ...]
    target: float
    """The kill rate issue 33 asks of this area."""
    own_pids: bool = False
    """Run the tests in a PID namespace of their own (`unshare`): a mutant of the code that
    finds and kills leftover processes can otherwise SIGKILL every process on the machine."""


AREAS: dict[str, Area] = {
    "sessions": Area(
        ("sessions/sqlite_store.py", "sessions/sqlite_rows.py", "sessions/schema.py"),
        (
            "tests/sessions/test_store.py",
            "tests/sessions/test_durability.py",
            "tests/sessions/test_schema.py",
            "tests/sessions/test_compaction.py",
            "tests/sessions/test_secrets.py",
            "tests/sessions/test_processes.py",
            "tests/sessions/test_store_faults.py",
            "tests/sessions/test_store_edges.py",
            "tests/sessions/test_export_import.py",
        ),
        0.90,
    ),
    "batch": Area(
        ("batch/results.py", "batch/scheduler.py", "batch/local_pool.py", "batch/backoff.py"),
        ("tests/batch", "-m", "not ray"),
        0.90,
    ),
    "providers": Area(
        ("providers/error_mapping.py", "providers/deadlines.py", "providers/retry.py"),
        (
            "tests/providers/test_error_mapping.py",
            "tests/providers/test_bare_statuses.py",
            "tests/providers/test_retry.py",
            "tests/providers/test_faults.py",
            "tests/providers/test_deadlines.py",
            "tests/batch/test_backoff.py",
            "tests/context_mgmt/test_summary_checks.py",
        ),
        0.90,
    ),
    "redact": Area(
        ("redact/redactor.py", "redact/names.py"),
        ("tests/redact", "tests/sessions/test_secrets.py"),
        0.90,
    ),
    "permissions": Area(
        ("agent/permissions/decide.py", "agent/permissions/rules.py"),
        (
            "tests/agent/test_permissions.py",
            "tests/agent/test_shell_permissions.py",
            "tests/agent/test_permissions_e2e.py",
        ),
        0.90,
    ),
    "trust": Area(
        ("agent/trust.py",),
        (
            "tests/agent/test_trust.py",
            "tests/agent/test_trust_e2e.py",
            "tests/agent/test_trust_display_e2e.py",
        ),
        0.90,
    ),
    "sandbox": Area(
        ("agent/sandbox/policy.py", "agent/sandbox/launch.py", "agent/sandbox/lifetime.py"),
        (
            "tests/agent/sandbox",
            "tests/agent/test_sandbox_e2e.py",
            "tests/agent/test_sandbox_attacks_e2e.py",
        ),
        0.90,
        own_pids=True,
    ),
    "context": Area(
        (
            "context_mgmt/summarize.py",
            "context_mgmt/structured.py",
            "context_mgmt/ladder.py",
            "context_mgmt/folding.py",
            "context_mgmt/masking.py",
            "context_mgmt/trim_plan.py",
        ),
        ("tests/context_mgmt",),
        0.85,
    ),
}

_FROZEN = (
    "harmless: @dataclass(frozen=True) -> frozen=False; the instances are never mutated or "
    "hashed, so nothing a user sees changes"
)
_TWO_ROLES = (
    'equivalent: a message\'s role is "user" or "assistant" and "assistant" sorts first, '
    "and user messages hold no tool requests, so the changed comparison picks the same "
    "messages"
)
_WAITED = (
    "harmless: the trim clock's sum of saved tokens times calls starts at 1 or -1 instead of "
    "0, against sums in the thousands of tokens: a trim may come one call sooner or later"
)
_LAST_MODE = (
    "equivalent: the sandbox mode is one of three names, and none sorts after "
    '"workspace-write", so `>=` it is `==` it'
)

_OWN_FORKSERVER_START = (
    "harmless: `gosling batch` starts the forkserver (with the SDKs preloaded) before it "
    "makes the pool, so the pool's own start is a no-op there; a library caller's workers "
    "would each import the SDKs instead, slower and with the same results"
)
JUDGED: dict[str, str] = {
    # Survivors read one by one and found equivalent (no behaviour changes) or harmless (a
    # size, speed or formatting detail no user meets). Keyed by where the mutant was when it
    # was judged: once the code moves, a judgement stops matching and the survivor shows up
    # as unjudged again, to be read anew.
    "agent/permissions/decide.py:104 NumberReplacer": (
        "equivalent: lru_cache maxsize 256 -> 255/257 changes only how many compiled path "
        "specs are cached"
    ),
    "agent/permissions/rules.py:63 ReplaceTrueWithFalse": _FROZEN,
    "agent/permissions/rules.py:73 ReplaceTrueWithFalse": _FROZEN,
    "agent/permissions/rules.py:134 ReplaceTrueWithFalse": _FROZEN,
    "redact/redactor.py:51 ReplaceTrueWithFalse": _FROZEN,
    "redact/redactor.py:47 NumberReplacer": (
        "harmless: a found secret of 4,097 characters is remembered in encoded form too "
        "(4,096 and shorter are, and a test holds that)"
    ),
    "redact/redactor.py:239 ReplaceAndWithOr": (
        "equivalent: a non-ASCII form is never part of base64 or hex output, so searching "
        "wrapped blocks for it finds nothing"
    ),
    "redact/redactor.py:264 AddNot": (
        "equivalent: both branches give a snapshot of the same environment (a copy instead "
        "of the live dict)"
    ),
    "redact/redactor.py:269 AddNot": (
        "equivalent: `not a is not None and b` is never true, so the forms are rebuilt on "
        "every call (slower, same output)"
    ),
    "redact/redactor.py:288 ReplaceOrWithAnd": (
        "equivalent: a secret found again is re-added with the same forms"
    ),
    "redact/redactor.py:289 ReplaceFalseWithTrue": (
        "equivalent: the forms of a secret already known are replaced in the text again, "
        "with the same markers"
    ),
    "redact/redactor.py:291 ReplaceFalseWithTrue": (
        "harmless: a found secret too long to remember still has its encoded forms replaced "
        "in the text it was found in: more redaction, never less"
    ),
    "redact/redactor.py:313 AddNot": (
        "equivalent: `_remember` rebuilds the wrappable forms before the newly found ones "
        "are replaced, so both sources hold them"
    ),
    "redact/redactor.py:317 ReplaceAndWithOr": (
        "equivalent: without a line break there is no wrapped block, and without wrappable "
        "forms nothing is searched in one"
    ),
    "redact/redactor.py:361 ReplaceUnaryOperator_USub_Invert": (
        "equivalent: ~n is -n-1, the same longest-first order"
    ),
    "redact/redactor.py:383 ReplaceAndWithOr": (
        "equivalent: strings, dicts and lists are handled before; for None and booleans "
        "redacting str(value) changes nothing, so the value is returned as it was"
    ),
    "redact/redactor.py:386 ReplaceComparisonOperator_Eq_LtE": (
        "equivalent for numbers: a marker ('[REDACTED:') sorts after any digit string, so "
        "`<=` holds exactly when nothing was replaced"
    ),
    "agent/trust.py:87 ReplaceTrueWithFalse": _FROZEN,
    "providers/error_mapping.py:33 ReplaceTrueWithFalse": _FROZEN,
    "providers/error_mapping.py:68 ExceptionReplacer": (
        "equivalent: a body parsed from JSON has no cycles, and default=str turns anything "
        "else into text, so json.dumps never raises there"
    ),
    "providers/error_mapping.py:117 ReplaceComparisonOperator_Eq_LtE": (
        "equivalent: no error arrives with a status below 200 (1xx are never final)"
    ),
    "providers/error_mapping.py:86 ReplaceComparisonOperator_NotEq_Gt": (
        "equivalent: no error arrives with a status below 200 (1xx are never final), so the "
        "status is left out of the label for 200 alone either way"
    ),
    "agent/sandbox/launch.py:27 NumberReplacer": (
        "harmless: the pipes' reader limit only sets when reading pauses; a command's output "
        "is read in chunks (`read(n)`), never by line, so another limit changes buffering, "
        "not what is read"
    ),
    "agent/sandbox/lifetime.py:48 NumberReplacer": (
        "equivalent: the per-call marker is 11 or 13 random bytes instead of 12, as unguessable "
        "and matched whole either way"
    ),
    "agent/sandbox/lifetime.py:61 ReplaceTrueWithFalse": (
        "equivalent: `use_errno` only keeps errno for `ctypes.get_errno`, which nothing reads; "
        "the hook's one call does not check for failure"
    ),
    "agent/sandbox/lifetime.py:68 NumberReplacer": (
        "equivalent: Linux reads only the signal argument of PR_SET_PDEATHSIG; arguments 3-5 "
        "are ignored whatever they hold"
    ),
    "agent/sandbox/policy.py:120 ReplaceComparisonOperator_Eq_GtE": _LAST_MODE,
    "agent/sandbox/policy.py:122 ReplaceComparisonOperator_Eq_GtE": _LAST_MODE,
    "context_mgmt/trim_plan.py:61 ReplaceTrueWithFalse": _FROZEN,
    "context_mgmt/trim_plan.py:54 NumberReplacer": (
        "harmless: the default trim patience 3 or 1 instead of 2 (config `trim_patience`): "
        "trims a little later or sooner, each still paying for itself"
    ),
    "context_mgmt/trim_plan.py:75 NumberReplacer": (
        "equivalent: every plan gosling reads `settled` from is made by `plan_trim`, which "
        "always sets it; the default only fills plans that go to the clock, which ignores it"
    ),
    "context_mgmt/trim_plan.py:97 NumberReplacer": (
        "equivalent for the walk's end -1 -> -2 (the others are caught): the extra step "
        "revisits the last message, which in a view sent to a model is tool results or text, "
        "skipped either way"
    ),
    "context_mgmt/trim_plan.py:107 ReplaceComparisonOperator_NotEq_Lt": _TWO_ROLES,
    "context_mgmt/trim_plan.py:256 ReplaceComparisonOperator_Eq_LtE": _TWO_ROLES,
    "context_mgmt/masking.py:243 ReplaceComparisonOperator_Eq_GtE": _TWO_ROLES,
    "context_mgmt/trim_plan.py:111 ReplaceComparisonOperator_Eq_LtE": (
        "equivalent: the kept-call count starts at 0 and only grows, so `<= 0` is `== 0`"
    ),
    "context_mgmt/trim_plan.py:291 ReplaceComparisonOperator_Gt_NotEq": (
        "equivalent: a cache read price is never negative (PromptCache validates ge=0), so "
        "`!= 0` is `> 0`"
    ),
    "context_mgmt/masking.py:46 NumberReplacer": (
        "harmless: the default number of newest tool results kept verbatim 9 or 11 instead "
        "of 10 (config `mask_keep_last`)"
    ),
    "context_mgmt/summarize.py:120 ReplaceFalseWithTrue": (
        "equivalent: every Summary gosling makes passes `truncated` explicitly"
    ),
    "context_mgmt/summarize.py:231 ReplaceComparisonOperator_Eq_LtE": (
        "equivalent: a count of tool responses is never negative, so `<= 0` is `== 0`"
    ),
    "context_mgmt/summarize.py:423 NumberReplacer": (
        "equivalent: the second rejected reply always ends in CompactionFailed right after, "
        "and nothing reads the count from there"
    ),
    "context_mgmt/folding.py:33 NumberReplacer": (
        "harmless: the folding note names the latest 7 or 9 folded calls instead of 8; the "
        "rest are listed by the recall tool either way"
    ),
    "context_mgmt/masking.py:180 ReplaceComparisonOperator_NotEq_Gt": (
        "equivalent: a non-empty output has at least one line, so `> 1` is `!= 1`"
    ),
    "context_mgmt/structured.py:342 ReplaceComparisonOperator_Eq_LtE": (
        "equivalent: the depth is 1 after the opening brace and the scan returns as soon as "
        "it is back to 0, so it is never below 0"
    ),
    "context_mgmt/trim_plan.py:286 ReplaceComparisonOperator_LtE_Eq": (
        "equivalent: every plan's saved_tokens is floored at 0 where it is made (plan_trim, "
        "the trimmer's summary check), so `== 0` is `<= 0`"
    ),
    "agent/sandbox/launch.py:141 NumberReplacer": (
        "harmless: the poll interval for a process `spawn` did not start (gosling's own "
        "calls never poll) 1.01 s, or a busy loop with -0.99"
    ),
    "agent/sandbox/policy.py:137 ReplaceComparisonOperator_Eq_GtE": (
        'harmless: `>= "read-only"` also holds for "workspace-write", where the workspace '
        "is bound writable already; the extras are MCP server caches under gosling's state "
        "directory, so only a GOSLING_HOME inside the workspace (hidden by a tmpfs) loses the "
        "cache between calls"
    ),
    "context_mgmt/folding.py:35 NumberReplacer": (
        "harmless: the folding note quotes the first lines of the latest 2 or 4 folded "
        "errors instead of 3; each stays recallable in full"
    ),
    "context_mgmt/structured.py:296 ReplaceComparisonOperator_Eq_LtE": (
        "equivalent: an index from enumerate is never negative, so `<= 0` is `== 0`"
    ),
    "context_mgmt/masking.py:152 ReplaceComparisonOperator_Eq_LtE": _TWO_ROLES,
    "context_mgmt/summarize.py:219 ReplaceUnaryOperator_USub_Invert": (
        "equivalent: the ladder's first-rung marker -1 becomes ~1 (-2); no message count is "
        "negative, so the first rung runs either way"
    ),
    "context_mgmt/folding.py:37 NumberReplacer": (
        "harmless: the folding note's lines are cut at 159 or 161 characters instead of 160"
    ),
    "context_mgmt/trim_plan.py:109 NumberReplacer": (
        "equivalent: the walk goes back from the end, so each call's result (which follows "
        "it: every call in a view is answered) is sized before the call is reached; the "
        "default is never used"
    ),
    "agent/sandbox/policy.py:122 ReplaceComparisonOperator_Eq_LtE": (
        'equivalent: `<= "workspace-write"` also holds for "read-only", where binding the git '
        "metadata read-only inside a workspace bound read-only changes nothing"
    ),
    "context_mgmt/masking.py:218 ReplaceComparisonOperator_Eq_LtE": (
        "equivalent: a cache key's length follows from its first element, the message's "
        "content tuple, which is compared by identity too; same content, same length"
    ),
    "context_mgmt/structured.py:291 ReplaceComparisonOperator_Eq_GtE": (
        "equivalent: a candidate is a piece of the tail, so it never holds more `</analysis>` "
        "than the tail does; `>=` is `==`"
    ),
    "agent/sandbox/launch.py:121 NumberReplacer": (
        "harmless: releasing a process's pipes waits 1 or 3 s instead of 2 for its exit "
        "status before closing them anyway"
    ),
    "context_mgmt/summarize.py:103 ReplaceTrueWithFalse": _FROZEN,
    "context_mgmt/summarize.py:503 ReplaceTrueWithFalse": _FROZEN,
    "context_mgmt/masking.py:54 NumberReplacer": (
        "harmless: the placeholder cache holds one copy more or fewer than 16,384"
    ),
    "context_mgmt/trim_plan.py:275 NumberReplacer": _WAITED,
    "context_mgmt/trim_plan.py:281 NumberReplacer": _WAITED,
    "agent/sandbox/lifetime.py:63 ExceptionReplacer": (
        "unreachable on Linux: `CDLL(None)` is the running process's own C library, which "
        "has `prctl`; the clause is for a libc that cannot be loaded or lacks it"
    ),
    "context_mgmt/structured.py:45 ReplaceTrueWithFalse": _FROZEN,
    "agent/sandbox/policy.py:53 ReplaceTrueWithFalse": _FROZEN,
    "agent/sandbox/launch.py:31 ReplaceTrueWithFalse": _FROZEN,
    "context_mgmt/masking.py:78 ReplaceComparisonOperator_Eq_LtE": (
        "equivalent: the count of calls to mask is floored at 0 and rounded down to whole "
        "batches, never negative, so `<= 0` is `== 0`"
    ),
    "context_mgmt/summarize.py:204 ReplaceComparisonOperator_Eq_LtE": (
        'equivalent: a compaction form is "transcript" or "prefix", and "transcript" sorts '
        'after "prefix", so `<= "prefix"` is `== "prefix"`'
    ),
    "context_mgmt/trim_plan.py:51 NumberReplacer": (
        "harmless: the default token budget of the newest calls kept whole (config "
        "`mask_keep_tokens`) one token more or less than 4,000"
    ),
    "agent/sandbox/policy.py:113 ReplaceComparisonOperator_Eq_LtE": (
        'equivalent: the private tmp directories are "/tmp" and "/var/tmp", and "/var/tmp" '
        'sorts after "/tmp", so `<= "/tmp"` is `== "/tmp"`'
    ),
    "agent/sandbox/policy.py:137 ReplaceComparisonOperator_Eq_LtE": (
        'equivalent: a policy\'s mode is "read-only" or "workspace-write" (no policy is made '
        'for "off"), and "workspace-write" sorts after "read-only", so `<=` is `==`'
    ),
    "agent/sandbox/lifetime.py:107 ReplaceComparisonOperator_Gt_GtE": (
        "equivalent: a monotonic clock difference that is exactly 5.0 seconds, to the "
        "nanosecond, does not occur"
    ),
    "context_mgmt/masking.py:182 ReplaceComparisonOperator_NotEq_Gt": (
        "equivalent: the image count is at least 1 where it is named, so `> 1` is `!= 1`"
    ),
    "context_mgmt/summarize.py:122 ReplaceFalseWithTrue": (
        "equivalent: every Summary gosling makes passes `merged_prior` explicitly"
    ),
    "context_mgmt/trim_plan.py:111 ReplaceComparisonOperator_Gt_NotEq": (
        "equivalent: keep_last is never negative (config validates ge=0; the fixed rule "
        "refuses it), so `!= 0` is `> 0`"
    ),
    "context_mgmt/trim_plan.py:73 NumberReplacer": (
        "harmless: a plan from plan_trim would count a one-off cost of 1 (or -1) token-call "
        "instead of 0 against its savings of thousands: a trim one call sooner or later"
    ),
    "agent/sandbox/lifetime.py:96 ReplaceTrueWithFalse": _FROZEN,
    "context_mgmt/folding.py:115 ReplaceUnaryOperator_USub_Invert": (
        "harmless: the folding note names the latest 9 folded calls (`[~8:]`) instead of 8"
    ),
    "agent/sandbox/policy.py:44 NumberReplacer": (
        "equivalent for read-only 2 -> 3 (the other changes are caught): read-only stays the "
        "strictest mode, so the same project settings are kept or ignored"
    ),
    "batch/local_pool.py:63 ExceptionReplacer": (
        "harmless: a worker whose connection fails with an OSError rather than end of file "
        "(a reset socket pair once the batch is gone) exits with a traceback in workers.log "
        "instead of quietly; the batch has ended either way"
    ),
    "batch/local_pool.py:150 NumberReplacer": (
        "harmless: the pool's poll waits at least 1 s (floor 1.0) before stopping a task past "
        "its timeout, or polls without waiting until then (floor -1.0): a timed-out task is "
        "stopped up to a second late, or at a CPU's cost"
    ),
    "batch/results.py:77 ReplaceComparisonOperator_NotEq_Lt": (
        "equivalent: the complete lines are a prefix of the file, never longer, so `<` is `!=`"
    ),
    "batch/scheduler.py:92 ReplaceComparisonOperator_Eq_LtE": (
        "equivalent: a task's exit code is one of gosling's own (0, 1, 2, 130 ...), never "
        "negative, so `<= 0` is `== 0`"
    ),
    "batch/scheduler.py:179 ReplaceComparisonOperator_Lt_NotEq": (
        "equivalent: a provider's running count starts at 0 and no job is dispatched once it "
        "reaches the limit, so it is never above it and `!=` is `<`"
    ),
    "batch/local_pool.py:115 NumberReplacer": (
        "equivalent: the shared pause ends at a monotonic time; 1.0 or -1.0 instead of 0.0 "
        "is as far in the past (the clock counts seconds since boot) and pauses nothing"
    ),
    "batch/backoff.py:51 NumberReplacer": (
        "equivalent: a Ray-wide pause that ends at monotonic 1.0 or -1.0 instead of 0.0 is as "
        "far in the past (the clock counts seconds since boot) and pauses nothing"
    ),
    "batch/local_pool.py:33 NumberReplacer": (
        "harmless: the pool waits one second longer or shorter for its workers to exit on "
        "close before stopping them"
    ),
    "batch/local_pool.py:34 NumberReplacer": (
        "harmless: a worker whose task's timeout cancelled it has a second more or less to "
        "wind the run down before it is killed; the task is recorded as timed out either way"
    ),
    "batch/scheduler.py:25 NumberReplacer": (
        "harmless for 1.2: the driver looks at Ctrl-C every 1.2 s instead of 0.2 s, so a "
        "cancel is seen a second later (-0.8 is caught: a backend refuses a negative wait, "
        "as ray.wait does)"
    ),
    "batch/local_pool.py:108 AddNot": _OWN_FORKSERVER_START,
    "batch/local_pool.py:108 ReplaceComparisonOperator_Eq_Gt": _OWN_FORKSERVER_START,
    "batch/local_pool.py:108 ReplaceComparisonOperator_Eq_Lt": _OWN_FORKSERVER_START,
    "batch/local_pool.py:82 ExceptionReplacer": (
        "harmless: a worker whose driver is gone before it could watch it ends with a "
        "traceback in workers.log instead of killing itself; it ends either way"
    ),
    "batch/local_pool.py:191 ReplaceAndWithOr": (
        "harmless: while a batch is being cancelled its idle workers get SIGTERM too and end "
        "at once instead of at the hang-up; they hold no task"
    ),
    "batch/results.py:53 NumberReplacer": (
        "equivalent for 32 -> 31 or 33 (0 -> 1 or -1 is caught): the lock file holds a pid "
        "and a newline, far fewer bytes than either"
    ),
    "batch/scheduler.py:177 ReplaceComparisonOperator_GtE_Eq": (
        "equivalent: no job is dispatched once the running count reaches the slots, so it "
        "never passes them and `==` is `>=`"
    ),
    "providers/retry.py:40 ReplaceTrueWithFalse": _FROZEN,
    "providers/retry.py:64 NumberReplacer": (
        "harmless for `>= -1`: a parsed retry-after is never below 0, and one built between "
        "-1 and 0 would wait a negative time, which is retrying at once, as 0 does (`>= 1` "
        "is caught: a retry-after of 0 must not fall back to the backoff)"
    ),
    "providers/retry.py:56 ReplaceFalseWithTrue": (
        "harmless: two retry policies that differ only in their random source compare "
        "unequal; policies are never compared"
    ),
    "providers/retry.py:166 ReplaceComparisonOperator_GtE_Eq": (
        "equivalent: the attempt counts up by one from 0, so it reaches max_retries exactly"
    ),
    "providers/retry.py:188 ReplaceComparisonOperator_GtE_Eq": (
        "equivalent: the attempt counts up by one from 0, so it reaches max_retries exactly"
    ),
    "providers/retry.py:150 NumberReplacer": (
        "harmless: the retry number in the log line only (the hook and the user see the "
        "right one; a test holds that)"
    ),
    "providers/retry.py:54 ReplaceFalseWithTrue": (
        "harmless: two retry policies that differ only in their sleep function compare "
        "unequal; policies are never compared"
    ),
    "providers/deadlines.py:22 NumberReplacer": (
        "harmless: the default request_timeout one second longer or shorter"
    ),
    "providers/deadlines.py:26 ReplaceTrueWithFalse": _FROZEN,
    "sessions/schema.py:137 NumberReplacer": (
        "unreachable: gosling creates schema_version and writes its first row in one "
        "transaction, so MAX(version) is never NULL in a database it made"
    ),
    "sessions/schema.py:169 ReplaceComparisonOperator_LtE_Lt": (
        "equivalent: migrations run only on a database without the current schema, whose "
        "version is 0, so no migration's version equals it"
    ),
    "sessions/schema.py:170 ReplaceContinueWithBreak": (
        "equivalent while one migration exists: there is nothing after it to skip or stop at"
    ),
    "sessions/sqlite_rows.py:185 NumberReplacer": (
        "equivalent: stored sequence numbers are SQLite rowids, 1 and up, so a start of -2, "
        "-1 or 0 lets the first one through and the order check is the same"
    ),
    "sessions/schema.py:160 NumberReplacer": (
        "unreachable: gosling creates schema_version and writes its first row in one "
        "transaction, so MAX(version) is never NULL in a database it made"
    ),
    "sessions/schema.py:163 ReplaceComparisonOperator_Lt_LtE": (
        "equivalent: migrate runs only when the schema is not current, so the version is "
        "never equal to the latest there"
    ),
    "sessions/schema.py:160 ReplaceOrWithAnd": (
        "equivalent while one migration exists: migrate runs only on a database without the "
        "current schema, whose MAX(version) is NULL, so `or 0` and `and 0` both give 0"
    ),
    "sessions/sqlite_rows.py:185 ReplaceUnaryOperator_USub_UAdd": (
        "equivalent: stored sequence numbers are SQLite rowids, 1 and up, so a start of +1 "
        "lets the first one through and the order check is the same"
    ),
    "sessions/sqlite_rows.py:185 ReplaceUnaryOperator_USub_Invert": (
        "equivalent: stored sequence numbers are SQLite rowids, 1 and up, so a start of ~1 "
        "(-2) lets the first one through and the order check is the same"
    ),
    "sessions/sqlite_rows.py:185 ReplaceUnaryOperator_USub_Not": (
        "equivalent: stored sequence numbers are SQLite rowids, 1 and up, so a start of "
        "`not 1` (False, 0) lets the first one through and the order check is the same"
    ),
    "sessions/sqlite_rows.py:185 ReplaceUnaryOperator_Delete_USub": (
        "equivalent: stored sequence numbers are SQLite rowids, 1 and up, so a start of 1 "
        "lets the first one through and the order check is the same"
    ),
    "sessions/sqlite_store.py:212 NumberReplacer": (
        "equivalent for row[-1]: the query selects one column (the id), so it is row[0]"
    ),
    "sessions/sqlite_store.py:245 ReplaceUnaryOperator_USub_Invert": (
        "equivalent: SQLite reads any negative LIMIT as no limit, and ~1 is -2"
    ),
    "sessions/schema.py:136 NumberReplacer": (
        "equivalent for -1 (the +1 is caught): a database without tables reads as version -1 "
        "instead of 0, which is just as far from the current one, so the schema is made"
    ),
    "sessions/sqlite_rows.py:166 NumberReplacer": (
        "equivalent for row[-1]: the query selects one column, so it is row[0]"
    ),
    "sessions/sqlite_rows.py:202 ReplaceComparisonOperator_Lt_LtE": (
        "equivalent: two stored messages never share a sequence number, and the same message "
        "twice is refused before this check"
    ),
    "sessions/sqlite_store.py:55 NumberReplacer": (
        "equivalent: open_default makes the directory 0700 right after, whatever mode it was "
        "created with (a test holds that)"
    ),
    "sessions/schema.py:112 ReplaceComparisonOperator_Eq_LtE": (
        "equivalent: a file size is never negative, so `<= 0` is `== 0`"
    ),
    "sessions/schema.py:112 ReplaceComparisonOperator_Eq_Lt": (
        "equivalent: a file size is never negative, and SQLite itself reads an empty file "
        "as an empty database"
    ),
    "sessions/schema.py:142 ReplaceComparisonOperator_Eq_GtE": (
        "harmless: an extended result code (SQLITE_IOERR_*, SQLITE_CORRUPT_*) would be worded "
        "'not an SQLite database' instead of 'cannot read it'; both are CorruptStore with the "
        "same advice"
    ),
    "sessions/schema.py:161 ReplaceComparisonOperator_Gt_GtE": (
        "equivalent: migrate runs only when the schema is not current, so the version is "
        "never equal to the latest there"
    ),
    "sessions/sqlite_store.py:314 ReplaceComparisonOperator_Eq_LtE": (
        "equivalent: an UPDATE's rowcount is never negative"
    ),
    "sessions/sqlite_store.py:87 NumberReplacer": (
        "harmless: the default busy timeout one second longer or shorter"
    ),
    "sessions/sqlite_rows.py:134 NumberReplacer": (
        "equivalent for row[-1] (the +1 is caught): the message query selects one column, the "
        "message's JSON, so it is row[0]"
    ),
    "sessions/sqlite_store.py:497 NumberReplacer": (
        "equivalent for row[-1] (the +1 is caught): PRAGMA integrity_check returns one column, "
        "so it is row[0]"
    ),
    "providers/deadlines.py:84 ReplaceComparisonOperator_Lt_NotEq": (
        "equivalent: the first-byte end is the smaller of the two deadlines, never later "
        "than the overall one, so `<` and `!=` agree"
    ),
    "providers/deadlines.py:23 NumberReplacer": (
        "harmless: the default first_byte_timeout one second longer or shorter"
    ),
    "providers/retry.py:58 ReplaceFalseWithTrue": (
        "harmless: two retry policies that differ only in their on_retry hook compare "
        "unequal; policies are never compared"
    ),
    "agent/trust.py:118 NumberReplacer": (
        "harmless: the trust file indented by 1 or 3 spaces instead of 2"
    ),
    "agent/trust.py:128 ReplaceTrueWithFalse": (
        "equivalent: the temporary file always exists when the cleanup runs (the write or "
        "the rename failed), so missing_ok is never needed"
    ),
}

EXCLUDED_OPERATORS = (
    "core/ReplaceBinaryOperator_.*",
    "core/VariableReplacer",
    "core/VariableInserter",
    "core/RemoveDecorator",
    "core/ReplaceComparisonOperator_.*_Is(Not)?$",
    "core/ReplaceComparisonOperator_Is(Not)?_.*",
)


def _toml_list(items: tuple[str, ...]) -> str:
    return "[" + ", ".join(json.dumps(item) for item in items) + "]"


def _python(area: Area) -> list[str]:
    """How the area's tests start Python: niced, never reading a cached .pyc of the unmutated
    file, and for `own_pids` areas as the first process of a new PID namespace (with /proc of
    its own, and everything in it killed when it ends)."""
    isolate: list[str] = []
    if area.own_pids:
        isolate = ["unshare", "--pid", "--kill-child", "--mount-proc"]
        if os.geteuid() != 0:
            isolate.append("--map-root-user")
    return [*isolate, "env", "PYTHONDONTWRITEBYTECODE=1", "nice", "-n", "10", sys.executable]


def _test_command(area: Area) -> list[str]:
    return [
        *_python(area),
        "-m",
        "pytest",
        "-x",
        "-q",
        "-p",
        "no:cacheprovider",
        *area.tests,
    ]


def coverage_map(area: Area, tmp: Path) -> dict[str, dict[str, list[str]]] | None:
    """Which tests run each line of the area's modules (module -> line -> test ids), from
    one run of the area's tests under coverage with a context per test; None without
    pytest-cov (then every mutant runs the area's whole test command)."""
    try:
        from coverage import CoverageData  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    data_file = tmp / "coverage.data"
    sources = sorted({str((ROOT / m).parent.resolve()) for m in area.modules})
    command = [*_test_command(area), "--cov-context=test", "--cov-report="]
    command += [f"--cov={source}" for source in sources]
    env = {**os.environ, "COVERAGE_FILE": str(data_file)}
    run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env)
    if run.returncode != 0 or not data_file.exists():
        return None
    data = CoverageData(str(data_file))
    data.read()
    measured = {str(Path(f).resolve()): f for f in data.measured_files()}
    found: dict[str, dict[str, list[str]]] = {}
    for module in area.modules:
        recorded = measured.get(str((ROOT / module).resolve()))
        by_line = data.contexts_by_lineno(recorded) if recorded else {}
        found[module] = {
            str(line): sorted({c.rsplit("|", 1)[0] for c in contexts if c})
            for line, contexts in by_line.items()
        }
    return found


def _config(area: Area, timeout: float, selector: list[str] | None = None) -> str:
    words = selector or _test_command(area)
    command = " ".join(shlex.quote(word) for word in words)
    return (
        "[cosmic-ray]\n"
        f"module-path = {_toml_list(area.modules)}\n"
        f"timeout = {timeout}\n"
        "excluded-modules = []\n"
        f"test-command = {json.dumps(command)}\n\n"
        '[cosmic-ray.distributor]\nname = "local"\n\n'
        "[cosmic-ray.filters.operators-filter]\n"
        f"exclude-operators = {_toml_list(EXCLUDED_OPERATORS)}\n"
    )


def _tool(name: str) -> str:
    found = Path(sys.executable).with_name(name)
    if not found.exists():
        raise SystemExit(
            f"{name} is not installed: run `python3 dev.py mutate`, which installs the "
            "`mutate` extra (cosmic-ray)"
        )
    return str(found)


def _outcomes(session: Path) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    dumped = subprocess.run(
        [_tool("cosmic-ray"), "dump", str(session)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    return [tuple(json.loads(line)) for line in dumped.stdout.splitlines() if line.strip()]


def _describe(item: dict[str, Any]) -> str:
    [mutation] = item["mutations"]
    line = mutation["start_pos"][0]
    return f"{mutation['module_path']}:{line} {mutation['operator_name'].removeprefix('core/')}"


def sample_work(session: Path, size: int, seed: int) -> int:
    """Keep `size` of the session's mutants still to run, drawn with `seed`, and drop the
    rest from cosmic-ray's database; returns how many there were before."""
    with sqlite3.connect(session) as db:
        pending = [
            row[0]
            for row in db.execute(
                "SELECT job_id FROM work_items WHERE job_id NOT IN "
                "(SELECT job_id FROM work_results) ORDER BY job_id"
            )
        ]
        if size < len(pending):
            kept = set(random.Random(seed).sample(pending, size))
            dropped = [(job,) for job in pending if job not in kept]
            db.executemany("DELETE FROM mutation_specs WHERE job_id = ?", dropped)
            db.executemany("DELETE FROM work_items WHERE job_id = ?", dropped)
    return len(pending)


def wilson_interval(killed: int, total: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a kill rate measured on a sample."""
    if total == 0:
        return (0.0, 1.0)
    rate = killed / total
    centre = rate + z * z / (2 * total)
    spread = z * math.sqrt(rate * (1 - rate) / total + z * z / (4 * total * total))
    scale = 1 + z * z / total
    return (round((centre - spread) / scale, 3), round((centre + spread) / scale, 3))


TIMEOUT_FACTOR = 8
TIMEOUT_FLOOR = 60.0


def measure(name: str, area: Area, sample: int | None = None, seed: int = 0) -> dict[str, Any]:
    """Run every mutant of `area` (or `sample` of them, drawn with `seed`); the modules are
    restored afterwards whatever happens. A mutant whose tests run `TIMEOUT_FACTOR` times
    longer than without it (an endless loop, a regex that backtracks forever) is stopped and
    counts as caught: the suite would hang."""
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--", *area.modules],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    if dirty:
        raise SystemExit(f"commit or stash your changes to {' '.join(area.modules)} first")
    clock = time.monotonic()
    baseline = subprocess.run(_test_command(area), cwd=ROOT, capture_output=True, text=True)
    if baseline.returncode != 0:  # else every mutant would count as killed
        tail = "\n".join(baseline.stdout.splitlines()[-15:])
        raise SystemExit(f"{name}: the area's tests fail without any mutant:\n{tail}")
    timeout = max(TIMEOUT_FLOOR, TIMEOUT_FACTOR * (time.monotonic() - clock))
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"mutate-{name}-") as tmp:
        backup = Path(tmp) / "originals"
        for module in area.modules:
            (backup / module).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / module, backup / module)
        config, session = Path(tmp) / "config.toml", Path(tmp) / "session.sqlite"
        covered = coverage_map(area, Path(tmp))
        selector = None
        if covered is not None:
            map_path = Path(tmp) / "coverage-map.json"
            map_path.write_text(json.dumps(covered))
            selector = [*_python(area), "-m", "bench.mutation_select"]
            selector += [str(map_path), str(backup), "--", *area.tests]
        config.write_text(_config(area, timeout, selector))
        population = None
        try:
            for step in (
                [_tool("cosmic-ray"), "init", str(config), str(session)],
                [_tool("cr-filter-operators"), str(session), str(config)],
            ):
                subprocess.run(step, cwd=ROOT, check=True)
            if sample is not None:
                population = sample_work(session, sample, seed)
            exec_step = [_tool("cosmic-ray"), "exec", str(config), str(session)]
            subprocess.run(exec_step, cwd=ROOT, check=True)
            outcomes = _outcomes(session)
            rechecked = 0
            if selector is not None:
                outcomes, rechecked = _recheck_survivors(area, outcomes, timeout, backup)
        finally:
            for module in area.modules:
                shutil.copy2(backup / module, ROOT / module)
    killed, survivors, broken = 0, [], 0
    for item, result in outcomes:
        if result.get("worker_outcome") == "skipped":
            continue  # an excluded operator
        test_outcome = result.get("test_outcome")
        if test_outcome == "killed":
            killed += 1
        elif test_outcome == "survived":
            survivors.append(_describe(item))
        else:
            broken += 1  # the mutant does not even import: no bug a user could meet
    total = killed + len(survivors)
    equivalent = sum(1 for s in survivors if is_equivalent(s))
    drawn: dict[str, Any] = {}
    if sample is not None and population is not None and sample < population:
        low, high = wilson_interval(killed, total - equivalent)
        drawn = {"sampled_from": population, "seed": seed, "kill_rate_95": [low, high]}
    return {
        "modules": list(area.modules),
        "tests": list(area.tests),
        "mutants": total,
        "killed": killed,
        "survived": len(survivors),
        "incompetent": broken,
        "kill_rate": round(killed / total, 3) if total else None,
        "equivalent": equivalent,
        "kill_rate_of_killable": round(killed / (total - equivalent), 3)
        if total > equivalent
        else None,
        "target": area.target,
        **drawn,
        "survivors": sorted(survivors),
        "survivors_judged": {s: JUDGED[s] for s in sorted(set(survivors)) if s in JUDGED},
        "survivors_unjudged": sorted({s for s in survivors if s not in JUDGED}),
        "selection": "coverage" if selector is not None else "whole",
        "survivors_rechecked_whole": rechecked,
        "minutes": round((time.monotonic() - started) / 60, 1),
        "measured": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def _recheck_survivors(
    area: Area,
    outcomes: list[tuple[dict[str, Any], dict[str, Any]]],
    timeout: float,
    backup: Path,
) -> tuple[list[tuple[dict[str, Any], dict[str, Any]]], int]:
    """Run each survivor of the coverage-selected tests again under the area's whole test
    command: a test that runs the line only in a child process (not recorded) may catch it.
    The outcome of that run is the one kept."""
    command = " ".join(shlex.quote(word) for word in _test_command(area))
    checked: list[tuple[dict[str, Any], dict[str, Any]]] = []
    count = 0
    for item, result in outcomes:
        if result.get("test_outcome") == "survived":
            [mutation] = item["mutations"]
            args = [mutation["module_path"], mutation["operator_name"]]
            args.append(str(mutation["occurrence"]))
            count += 1
            try:
                run = subprocess.run(
                    [_tool("cosmic-ray"), "mutate-and-test", *args, command],
                    cwd=ROOT,
                    capture_output=True,
                    text=True,
                    timeout=timeout,
                )
                verdict = json.loads(run.stdout.strip().splitlines()[-1])
            except subprocess.TimeoutExpired:
                verdict = {"test_outcome": "killed"}  # the whole suite hangs on it
            except (ValueError, IndexError):
                verdict = result
            finally:
                for module in area.modules:
                    shutil.copy2(backup / module, ROOT / module)
            result = {**result, "test_outcome": verdict.get("test_outcome", "survived")}
        checked.append((item, result))
    return checked, count


def is_equivalent(survivor: str) -> bool:
    """Whether a survivor is judged equivalent (or unreachable): no test can tell it from the
    code, so it is no bug the tests missed. One judged harmless is a real change that does
    not matter, and still counts against the kill rate."""
    return JUDGED.get(survivor, "").startswith(("equivalent", "unreachable"))


def _save(name: str, figures: dict[str, Any]) -> None:
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    results.setdefault("mutation", {})[name] = figures
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")


def _count(least: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        if not text.isdigit() or int(text) < least:
            raise argparse.ArgumentTypeError(f"a whole number of {least} or more, e.g. 60")
        return int(text)

    return parse


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.mutation", description=__doc__)
    parser.add_argument("areas", nargs="*", metavar="AREA", help=", ".join(AREAS))
    parser.add_argument("--sample", type=_count(1), help="mutants drawn per area")
    parser.add_argument("--seed", type=_count(0), default=0, help="the draw (default 0)")
    return parser


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    sample, seed = args.sample, args.seed
    wanted = args.areas or list(AREAS)
    unknown = [name for name in wanted if name not in AREAS]
    if unknown:
        print(
            f"unknown area(s) {', '.join(unknown)}; choose from {', '.join(AREAS)}",
            file=sys.stderr,
        )
        return 2
    os.environ.setdefault("HYPOTHESIS_PROFILE", "seeded")
    worst = 0
    for name in wanted:
        print(f"[mutate] {name} ...", file=sys.stderr, flush=True)
        figures = measure(name, AREAS[name], sample, seed)
        _save(name, figures)
        rate = figures["kill_rate"]
        drawn = ""
        if "sampled_from" in figures:
            low, high = figures["kill_rate_95"]
            drawn = f", a sample of {figures['sampled_from']}: 95% in {low:.0%}-{high:.0%}"
        print(
            f"[mutate] {name}: {figures['killed']} of {figures['mutants']} killed "
            f"({rate:.0%}, target {figures['target']:.0%}{drawn}; "
            f"{figures['equivalent']} survivors judged equivalent) in {figures['minutes']} min",
            file=sys.stderr,
        )
        for survivor in figures["survivors"]:
            print(f"  survived: {survivor}", file=sys.stderr)
        killable = figures["kill_rate_of_killable"]
        if killable is not None and killable < figures["target"]:
            worst = 1
    return worst


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
