"""Every prompt gosling sends, as Jinja templates in `prompts/templates/*.md`.

`render(name, **context)` uses the user's `<config dir>/prompts/<name>` when it exists;
`render_source(text, **context)` renders template text a caller passes in.
"""

from gosling.prompts.templating import (
    PromptError,
    code_fence,
    override_dir,
    render,
    render_source,
    template_path,
)

__all__ = ["PromptError", "code_fence", "override_dir", "render", "render_source", "template_path"]
