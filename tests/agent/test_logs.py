"""Log records go to the log file under the state dir; warnings reach stderr only headless."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from gosling.agent.cli.logs import setup_logging
from gosling.prompts.locations import user_dirs


@pytest.fixture(autouse=True)
def _restore_root_logger() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in root.handlers:
        if handler not in handlers:
            handler.close()
    root.handlers[:], root.level = handlers, level


def test_records_go_to_the_log_file_and_warnings_to_stderr(
    capsys: pytest.CaptureFixture[str],
) -> None:
    setup_logging(warnings_to_stderr=True)
    logging.getLogger("gosling.test").info("quiet detail")
    logging.getLogger("gosling.test").warning("refused @/etc/passwd")
    for handler in logging.getLogger().handlers:
        handler.flush()
    text = (user_dirs().state / "logs" / "gosling.log").read_text()
    assert "quiet detail" in text and "refused @/etc/passwd" in text
    err = capsys.readouterr().err
    assert "warning: refused @/etc/passwd" in err and "quiet detail" not in err


def test_the_interactive_session_keeps_warnings_off_the_terminal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    setup_logging(warnings_to_stderr=False)
    setup_logging(warnings_to_stderr=False)  # calling twice adds no second handler
    logging.getLogger("gosling.test").warning("a warning")
    assert capsys.readouterr().err == ""
    ours = [h for h in logging.getLogger().handlers if getattr(h, "_gosling", False)]
    assert len(ours) == 1
