"""The provider error taxonomy. SDK exceptions never escape an adapter; they become these."""

from __future__ import annotations


class ProviderError(Exception):
    """A model call failed. `status` is the HTTP status when there was one."""

    def __init__(self, message: str, *, provider: str = "", status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.provider = provider
        self.status = status

    def __str__(self) -> str:
        prefix = f"{self.provider}: " if self.provider else ""
        return f"{prefix}{self.message}"


class ContextLengthExceeded(ProviderError):
    """The request did not fit the model's context window."""


class RateLimited(ProviderError):
    """Too many requests or the service is overloaded; `retry_after` is in seconds."""

    def __init__(
        self,
        message: str,
        *,
        provider: str = "",
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, provider=provider, status=status)
        self.retry_after = retry_after


class AuthenticationFailed(ProviderError):
    """The key is missing, wrong or not allowed to use the model."""


class ServerError(ProviderError):
    """The service failed (5xx, a dropped connection, a broken stream)."""


class TimedOut(ServerError):
    """The call passed its deadline (nothing arrived in time, or the whole reply took too
    long, as with a server that trickles keep-alive pings); worth a retry like other server
    failures."""


class RequestFailed(ProviderError):
    """The request itself was refused (4xx misuse); retrying will not help."""


class ProviderConfigError(ProviderError):
    """The provider cannot be built as configured (unknown name, missing base URL, a real
    endpoint while testing). The message says what to change."""


class MissingApiKey(AuthenticationFailed):
    """No API key was found; `env_var` names the variable to set."""

    def __init__(self, message: str, *, provider: str = "", env_var: str) -> None:
        super().__init__(message, provider=provider)
        self.env_var = env_var
