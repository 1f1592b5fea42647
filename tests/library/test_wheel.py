"""The wheel, installed into a fresh venv with only the library's dependencies, next to an
application that has its own `agent/`, `providers/`, `prompts/` and `sessions/` packages:
the README's library examples run there and pass `mypy --strict` against the installed
wheel, and the `gosling` command names the extra it needs.

Offline throughout: the wheel is built without build isolation, installed with `--no-index
--no-deps`, and the dependencies are this venv's own, made visible to the fresh venv through a
`.pth` file pointing at a directory that links only the library's dependency closure.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from tests.library.examples import ROOT, readme_examples

APP_PACKAGES = ("agent", "providers", "prompts", "sessions")


def _dependency_closure() -> dict[str, metadata.Distribution]:
    """The distributions `pip install gosling-agent` brings (no extras), by name."""
    found: dict[str, metadata.Distribution] = {}
    todo = ["gosling-agent"]
    while todo:
        name = todo.pop()
        key = name.lower().replace("_", "-")
        if key in found:
            continue
        dist = metadata.distribution(name)
        found[key] = dist
        for raw in dist.requires or []:
            requirement = Requirement(raw)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    del found["gosling-agent"]
    return found


def _link_dependencies(target: Path) -> list[str]:
    """Link the top-level entries (packages, modules, dist-info) of each dependency."""
    target.mkdir()
    for dist in _dependency_closure().values():
        for file in dist.files or []:
            top = Path(file).parts[0]
            if top in ("..", "__pycache__") or top.endswith(".pth"):
                continue
            source = Path(str(dist.locate_file(top)))
            if source.exists() and not (target / top).exists():
                (target / top).symlink_to(source)
    return sorted(p.name for p in target.iterdir())


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the fresh venv's python, the application dir)."""
    root = tmp_path_factory.mktemp("wheel")
    dist = root / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-build-isolation", "--no-deps",
         "--no-index", "-w", str(dist), str(ROOT)],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    [wheel] = dist.glob("gosling_agent-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        tops = {name.split("/")[0] for name in archive.namelist()}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"gosling"}

    env_dir = root / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
         "--no-index", str(wheel)],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    deps = root / "deps"
    linked = _link_dependencies(deps)
    assert "pydantic" in linked and "click" not in linked and "rich" not in linked
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    (Path(purelib) / "library-deps.pth").write_text(f"{deps}\n")

    app = root / "app"
    for package in APP_PACKAGES:
        (app / package).mkdir(parents=True)
        (app / package / "__init__.py").write_text(f'OWNER = "the application\'s {package}"\n')
    return python, app


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


def test_the_application_and_gosling_import_side_by_side(installed: tuple[Path, Path]) -> None:
    python, app = installed
    (app / "main.py").write_text(
        "import agent, prompts, providers, sessions\n"
        "import gosling, gosling.providers, gosling.prompts, gosling.sessions, gosling.agent\n"
        'assert providers.OWNER == "the application\'s providers"\n'
        'assert agent.OWNER == "the application\'s agent"\n'
        "assert hasattr(gosling.providers, 'Provider') and 'site-packages' in gosling.__file__\n"
        "print('side by side')\n"
    )
    done = subprocess.run(
        [str(python), "main.py"], cwd=app, env=_env(), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "side by side"


def test_the_readme_examples_run_and_type_check_against_the_wheel(
    installed: tuple[Path, Path],
) -> None:
    python, app = installed
    scripts = []
    for number, code in enumerate(readme_examples(), 1):
        script = app / f"readme_example_{number}.py"
        script.write_text(code, encoding="utf-8")
        scripts.append(script)
        done = subprocess.run(
            [str(python), script.name], cwd=app, env=_env(), capture_output=True, text=True,
            timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip()
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--python-executable", str(python),
         "--no-incremental", "--config-file", os.devnull, *(s.name for s in scripts)],
        cwd=app, env=_env(), capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "Success: no issues found in" in checked.stdout


def test_the_command_without_the_cli_extra_names_it(installed: tuple[Path, Path]) -> None:
    python, app = installed
    done = subprocess.run(
        [str(python.parent / "gosling"), "--help"], cwd=app, env=_env(), capture_output=True,
        text=True,
    )  # fmt: skip
    assert done.returncode == 2
    assert "pip install 'gosling-agent[cli]'" in done.stderr and "click" in done.stderr
