"""Options that hold for the whole batch, checked before any task runs: one wrong flag
(`--provider antropic`) would otherwise fail every task, and a rerun would then skip them
all as done."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from gosling.batch.tasks import TaskSpec
from gosling.batch.worker import RunDefaults


def batch_problems(
    tasks: Sequence[TaskSpec], defaults: RunDefaults, env: Mapping[str, str] | None = None
) -> list[str]:
    """One line per distinct provider/model/base URL the tasks would use that cannot work:
    an unknown provider, a missing API key, a malformed base URL, another vendor's model.
    Nothing is imported beyond the provider registry and no network is touched."""
    from gosling.agent.provider_choice import model_mismatch_for
    from gosling.providers import ProviderError
    from gosling.providers.factory import check_provider

    environ = os.environ if env is None else env
    problems: list[str] = []
    seen: set[tuple[str | None, str | None, str | None]] = set()
    for task in tasks:
        provider = task.provider or defaults.provider
        model = task.model or defaults.model
        base_url = task.base_url or defaults.base_url
        if (provider, model, base_url) in seen:
            continue
        seen.add((provider, model, base_url))
        where = _where(task, defaults)
        try:
            if provider is not None:
                provider = check_provider(provider, base_url, environ)
            mismatch = model_mismatch_for(provider, model, environ)
        except ProviderError as exc:
            problems.append(f"{where}: {exc}")
            continue
        if mismatch is not None:
            problems.append(f"{where}: {mismatch}")
    return problems


def _where(task: TaskSpec, defaults: RunDefaults) -> str:
    """Which option the problem comes from: the batch's flags, or a task's own field."""
    own = [
        name
        for name, value in (
            ("provider", task.provider),
            ("model", task.model),
            ("base_url", task.base_url),
        )
        if value
    ]
    if own:
        return f"task {task.id} ({', '.join(own)})"
    flags = [
        f"--{name.replace('_', '-')} {value}"
        for name, value in (
            ("provider", defaults.provider),
            ("model", defaults.model),
            ("base_url", defaults.base_url),
        )
        if value
    ]
    return " ".join(flags) or "the default provider"
