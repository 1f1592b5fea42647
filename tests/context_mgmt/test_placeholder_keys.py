"""Placeholders that keep their keys (issue 27 item 7): a masked output names the few
distinctive strings behind it, so the model knows what it could recall."""

from __future__ import annotations

from gosling.context_mgmt.later_use import LaterUse, count_hidden_uses, kept_tokens
from gosling.context_mgmt.masking import placeholder
from gosling.context_mgmt.placeholder_keys import MAX_KEY_CHARS, MAX_KEYS, placeholder_keys
from gosling.conversation import Message, TextContent, ToolRequest, ToolResponse

PYTEST_LOG = """\
============================= test session starts ==============================
collected 12 items

tests/test_dates.py ..F.........                                          [100%]

=================================== FAILURES ===================================
____________________________ test_month_rollover ______________________________
    def test_month_rollover():
>       assert add_months(date(2024, 1, 31), 1) == date(2024, 2, 29)
E       ValueError: day is out of range for month
src/calendar_utils/dates.py:48: ValueError
=========================== short test summary info ============================
FAILED tests/test_dates.py::test_month_rollover - ValueError: day is out of range
"""


def test_the_placeholder_names_the_error_the_failing_test_and_the_file() -> None:
    request = ToolRequest(id="t1", name="developer__shell", arguments={"command": "pytest -x"})
    response = ToolResponse(id="t1", content=(TextContent(text=PYTEST_LOG * 3),))
    shown = placeholder(response, request)
    keys = shown.split("it mentions ", 1)[1].split(";", 1)[0].split(", ")
    assert keys[0] == "ValueError"
    assert {"test_month_rollover", "tests/test_dates.py", "src/calendar_utils/dates.py"} <= set(
        keys
    )
    assert not any(set(k) == {"_"} for k in keys)  # the log's ____ rules are no keys
    assert shown.endswith('call context__recall("t1") to see it]')


def test_keys_are_capped_and_leave_out_what_the_call_already_shows() -> None:
    listing = "\n".join(f"src/pkg_{i:03}/module_{i:03}.py" for i in range(200))
    keys = placeholder_keys(listing, exclude="src/pkg_000/module_000.py")
    assert len(keys) <= MAX_KEYS and sum(len(k) for k in keys) <= MAX_KEY_CHARS
    assert "src/pkg_000/module_000.py" not in keys
    assert placeholder_keys("ok\nno distinctive words here") == []


def test_a_use_whose_tokens_the_placeholder_kept_is_not_counted_hidden() -> None:
    masked = Message(
        role="user",
        content=(
            ToolResponse(
                id="t1", content=(TextContent(text="[output hidden; it mentions _save_parents]"),)
            ),
        ),
    )
    kept = kept_tokens([masked], {"t1"})
    uses = [LaterUse("t1", 1, 5, "_save_parents"), LaterUse("t2", 3, 5, "other_name")]
    hidden_at = {5: {"t1", "t2"}}
    assert count_hidden_uses(uses, hidden_at).hidden == 2
    counted = count_hidden_uses(uses, hidden_at, {5: kept})
    assert counted.hidden == 1 and counted.hidden_pairs == (("t2", 5),)


def test_a_c_file_view_names_the_functions_it_defines_before_its_includes() -> None:
    includes = "".join(f'{n:6}\t#include "type/header_{n:02}.h"\n' for n in range(1, 3))
    body = (
        "    40\tstatic ast_t* make_pattern_type(pass_opt_t* opt, ast_t* pattern)\n"
        "    41\t{\n"
        "    42\t  ast_t* found = make_pattern_type(opt, ast_child(pattern));\n"
        "    43\t  return found_type_of(found);\n"
        "    44\t}\n"
        "    45\tbool is_match_exhaustive(pass_opt_t* opt, ast_t* ast);\n"
    )
    keys = placeholder_keys(includes + body)
    assert keys[0] == "make_pattern_type"
    # a prototype (ends in `;`) and a call are no definitions: they rank with the includes
    assert keys.index("is_match_exhaustive") > keys.index("type/header_01.h")
