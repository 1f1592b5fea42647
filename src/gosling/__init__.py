"""gosling: an agent runtime built around goose-grade context management.

Everything gosling installs lives under this one import root: `gosling.conversation`,
`gosling.prompts`, `gosling.hints`, `gosling.providers`, `gosling.sessions`,
`gosling.context_mgmt`, `gosling.agent`, `gosling.batch` and `gosling.redact`. In the
repository those packages are the folders at its top; `src/gosling/` links them under this
root so that the wheel, an editable install, pytest and mypy all see one module per file.

Importing `gosling` imports nothing else: each package is loaded when first used.
"""

from gosling.agent.version import __version__

__all__ = ["__version__"]

import logging as _logging

# A library stays quiet unless its caller configures logging: gosling.* records never reach
# the last-resort stderr handler. The command line configures the root logger itself.
_logging.getLogger("gosling").addHandler(_logging.NullHandler())
