"""The `shell` tool: one command, its exit code, stdout and stderr reported separately."""

from __future__ import annotations

from dataclasses import replace

from gosling.agent.sandbox import SandboxPolicy
from gosling.agent.sandbox.named_tmp import named_tmp_entries
from gosling.agent.sandbox.new_repos import move_aside_new_repos, moved_note, watched_places
from gosling.agent.tools.base import Tool, ToolContext, ToolError, ToolResult, tool
from gosling.agent.tools.developer.output import CapturedOutput
from gosling.agent.tools.developer.process import ShellOutcome, run_command, shell_environment
from gosling.agent.tools.developer.workspace import DeveloperState
from gosling.agent.tools.spill import session_tmp_dir, spill_dir_for

MAX_TIMEOUT_SECS = 3600.0


def shell_tool(state: DeveloperState) -> Tool:
    settings = state.settings

    @tool(destructive=True, open_world=True, caps_own_output=True)
    async def shell(
        ctx: ToolContext, command: str, timeout_secs: float | None = None
    ) -> ToolResult:
        """Run a command with bash (or sh) in the working directory and report its exit code,
        stdout and stderr. stdin is closed, so interactive programs fail instead of waiting.
        Long output is cut to its end; the full output is saved to a file you can view.
        Every process the command starts (background ones too) is stopped when it ends.

        Args:
            command: The shell command line.
            timeout_secs: Seconds before the command and everything it started are stopped
                (default 300).
        """
        if not command.strip():
            raise ToolError("The command is empty.")
        timeout = settings.shell_timeout_secs if timeout_secs is None else timeout_secs
        if not 0 < timeout <= MAX_TIMEOUT_SECS:
            raise ToolError(f"timeout_secs must be between 0 and {MAX_TIMEOUT_SECS:g}.")
        sandbox = settings.sandbox
        watched = []
        if sandbox is not None and sandbox.mode == "workspace-write":
            watched = watched_places(sandbox.workspace, ctx.working_dir)
        try:
            outcome = await run_command(
                command,
                cwd=ctx.working_dir,
                timeout=timeout,
                shell=settings.shell,
                env=shell_environment(allow=settings.env_allow),
                max_lines=settings.max_output_lines,
                max_bytes=settings.max_output_bytes,
                spill_dir=settings.spill_dir or spill_dir_for(ctx.session_id),
                sandbox=_with_named_tmp(
                    _with_session_tmp(settings.sandbox, ctx.session_id), command
                ),
            )
        except OSError as exc:
            raise ToolError(f"Could not start the command: {exc}") from None
        for captured in (outcome.stdout, outcome.stderr):
            if captured.spill_path is not None:
                state.spill_files.add(captured.spill_path.resolve())
        text = format_outcome(outcome, timeout)
        moved = move_aside_new_repos(watched) if watched else []
        if moved:
            text += "\n" + moved_note(moved)
        return ToolResult.error(text) if outcome.timed_out else ToolResult.text(text)

    return shell


def _with_named_tmp(sandbox: SandboxPolicy | None, command: str) -> SandboxPolicy | None:
    """The host `/tmp` entries the command names, readable over the private one
    (`agent.sandbox.named_tmp`)."""
    if sandbox is None or "/tmp/" not in command:
        return sandbox
    hidden = (*sandbox.hidden, *sandbox.hidden_files)
    named = named_tmp_entries(command, hidden=hidden)
    return replace(sandbox, readable=(*sandbox.readable, *named)) if named else sandbox


def _with_session_tmp(
    sandbox: SandboxPolicy | None, session_id: str | None
) -> SandboxPolicy | None:
    """A session's commands share one `/tmp` (a scratch file written by one command is read
    by the next); a run without a stored session gives each command an empty one."""
    if sandbox is None or session_id is None or sandbox.tmp is not None:
        return sandbox
    try:
        return replace(sandbox, tmp=session_tmp_dir(session_id))
    except OSError as exc:
        raise ToolError(f"Could not prepare the session's /tmp: {exc}") from None


def format_outcome(outcome: ShellOutcome, timeout: float) -> str:
    """Exit status first, then each stream under its own header."""
    if outcome.timed_out:
        status = (
            f"Timed out after {timeout:g}s; the command and every process it started were "
            "stopped. Output so far is below."
        )
    else:
        status = f"Exit code: {outcome.exit_code}"
    if outcome.stopped_background:
        status += (
            "\nBackground processes still held the output open after the command finished and "
            "were stopped; processes do not outlive the command that started them."
        )
    return "\n".join(
        [status, _section("stdout", outcome.stdout), _section("stderr", outcome.stderr)]
    )


def _section(label: str, captured: CapturedOutput) -> str:
    if captured.total_bytes == 0:
        return f"--- {label}: (empty) ---"
    if captured.spill_path is None:
        return f"--- {label} ---\n{captured.text.rstrip(chr(10))}"
    shown = captured.text.count("\n") + 1 if captured.text else 0
    return (
        f"--- {label}: last {shown} of {captured.total_lines} lines "
        f"({captured.total_bytes:,} bytes in all); the full output is in "
        f"{captured.spill_path} ---\n{captured.text}"
    )
