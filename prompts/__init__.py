"""Every prompt gosling sends, as Jinja templates in `prompts/templates/*.md`.

`render(name, **context)` renders a built-in template, or the file of the same name in the
override directory a caller opted into with `use_override_dir` (the command line uses the
user's `<config dir>/prompts/`); `render_source(text, **context)` renders template text a
caller passes in.
"""

from gosling.prompts.templating import (
    BUILTIN_DIR,
    PromptError,
    builtin_source,
    code_fence,
    override_dir,
    render,
    render_source,
    template_path,
    use_override_dir,
    user_override_dir,
)

__all__ = [
    "BUILTIN_DIR",
    "PromptError",
    "builtin_source",
    "code_fence",
    "override_dir",
    "render",
    "render_source",
    "template_path",
    "use_override_dir",
    "user_override_dir",
]
