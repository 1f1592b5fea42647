"""Every prompt gosling sends, as Jinja templates in `prompts/templates/*.md`.

`render(name, **context)` uses the user's `<config dir>/prompts/<name>` when it exists.
"""

from prompts.templating import PromptError, code_fence, override_dir, render, template_path

__all__ = ["PromptError", "code_fence", "override_dir", "render", "template_path"]
