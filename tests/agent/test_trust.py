"""Folder trust: the store of trusted project files, and what an untrusted file may set."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from gosling.agent.config import load_settings
from gosling.agent.trust import TrustStore, project_files
from gosling.agent.untrusted_config import filter_untrusted
from gosling.prompts.locations import user_dirs


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / ".gosling").mkdir()
    (root / ".gosling" / "config.toml").write_text('provider = "openai"\n')
    return root


def test_trust_is_per_real_path_and_content(project: Path, tmp_path: Path) -> None:
    store = TrustStore(tmp_path / "state" / "trust.json")
    files = project_files(project)
    assert not store.is_trusted(project, files)
    store.trust(project, files)
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    link = tmp_path / "link"
    link.symlink_to(project)
    assert store.is_trusted(link, project_files(link))  # the same folder by another path
    (project / ".gosling" / "config.toml").write_text('provider = "anthropic"\n')
    assert not store.is_trusted(project, project_files(project))


def test_a_new_gated_file_needs_trust_again(project: Path, tmp_path: Path) -> None:
    store = TrustStore(tmp_path / "trust.json")
    store.trust(project, project_files(project))
    extra = project / ".mcp.json"
    extra.write_text("{}")
    assert not store.is_trusted(project, [*project_files(project), extra])
    store.trust(project, [*project_files(project), extra])
    assert store.is_trusted(project, [*project_files(project), extra])


def test_an_unreadable_store_trusts_nothing_and_revoke_forgets(
    project: Path, tmp_path: Path
) -> None:
    store = TrustStore(tmp_path / "trust.json")
    store.path.write_text("{not json")
    assert not store.is_trusted(project, project_files(project))
    store.trust(project, project_files(project))
    assert [e.path for e in store.entries()] == [str(project.resolve())]
    assert store.revoke(project)
    assert not store.revoke(project)
    assert not store.is_trusted(project, project_files(project))


BASE = {"mode": "approve", "permissions": {"allow": ["a"], "ask": [], "deny": ["d"]}}


def test_untrusted_files_set_only_safe_or_tightening_values() -> None:
    kept = filter_untrusted(
        {
            "provider": "openai",
            "model": "gpt-expensive",
            "base_url": "http://evil",
            "fast_model": "x",
            "max_turns": 5000,
            "extensions": [{"name": "x", "command": "sh"}],
            "developer_extension": True,
            "mask_keep_last": 3,
            "mask_keep_tokens": 2000,
            "trim_patience": 1.5,
            "prompt_cache": "none",
            "context_strategy": "mask",
            "context_file_names": ["NOTES.md"],
            "permissions": {"allow": ["developer__shell"], "deny": ["developer__write"]},
            "models": {"m": {"context_limit": 1000, "max_output_tokens": 64000}},
        },
        {**BASE, "developer_extension": False},
    )
    assert kept.values == {
        "mask_keep_last": 3,
        "mask_keep_tokens": 2000,
        "trim_patience": 1.5,
        "context_strategy": "mask",
        "context_file_names": ["NOTES.md"],
        "permissions": {"allow": ["a"], "ask": [], "deny": ["d", "developer__write"]},
        "models": {"m": {"context_limit": 1000}},
    }
    assert kept.ignored == [
        "provider",
        "model",
        "base_url",
        "fast_model",
        "max_turns",
        "extensions",
        "developer_extension",
        "prompt_cache",
        "permissions.allow",
        "models.m.max_output_tokens",
    ]


@pytest.mark.parametrize(
    ("mode", "applies"),
    [("auto", False), ("smart_approve", False), ("approve", True), ("chat", True)],
)
def test_a_mode_applies_only_when_at_least_as_strict(mode: str, applies: bool) -> None:
    kept = filter_untrusted({"mode": mode}, BASE)
    assert ("mode" in kept.values) is applies
    assert ("mode" in kept.ignored) is not applies


@pytest.mark.parametrize("name", ["../../.aws/credentials", "/etc/passwd", "..", "a\\b"])
def test_hint_file_names_must_be_plain_names(name: str) -> None:
    assert filter_untrusted({"context_file_names": ["AGENTS.md", name]}, BASE).ignored == [
        "context_file_names"
    ]


def test_load_settings_applies_a_trusted_file_whole(project: Path) -> None:
    config = user_dirs().config / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('mode = "approve"\n')
    (project / ".gosling" / "config.toml").write_text('mode = "auto"\nbase_url = "http://x"\n')
    untrusted = load_settings(project, environ={})
    assert untrusted.settings.mode == "approve" and untrusted.settings.base_url is None
    assert untrusted.project is not None and untrusted.project.ignored == ("mode", "base_url")
    warning = untrusted.project.warning()
    assert warning is not None and f"gosling trust {project}" in warning
    assert "\n" not in warning
    once = load_settings(project, environ={}, trust_project=True)
    assert once.settings.mode == "auto" and once.project is not None and once.project.trusted
    TrustStore.default().trust(project, project_files(project))
    trusted = load_settings(project, environ={})
    assert trusted.settings.base_url == "http://x" and trusted.project is not None
    assert trusted.project.warning() is None


def test_scripts_the_project_files_run_by_path_are_covered(project: Path) -> None:
    import json

    (project / "bin").mkdir()
    for name in ("serve.py", "check.sh", "outside-args.txt"):
        (project / "bin" / name).write_text("#!/bin/sh\n")
    (project / "tool.py").write_text("")
    (project / "src" / "pkg").mkdir(parents=True)
    (project / "src" / "pkg" / "__init__.py").write_text("")
    (project / "src" / "pkg" / "mod.py").write_text("")
    (project / ".mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "a": {"command": "python", "args": ["bin/serve.py", "-m", "pkg.mod"]},
                    "b": {"command": "./tool.py"},
                    "c": {"command": "python", "args": ["/etc/passwd", "../x.py", "missing.py"]},
                }
            }
        )
    )
    (project / ".gosling" / "config.toml").write_text(
        '[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ncommand = "\\"$CLAUDE_PROJECT_DIR\\"/bin/check.sh"\n'
    )
    covered = [str(p.relative_to(project)) for p in project_files(project)]
    assert covered == [
        ".gosling/config.toml",
        ".mcp.json",
        "bin/check.sh",
        "bin/serve.py",
        "src/pkg/__init__.py",
        "src/pkg/mod.py",
        "tool.py",
    ]


def test_why_a_folder_trusted_once_is_untrusted_now(project: Path, tmp_path: Path) -> None:
    store = TrustStore(tmp_path / "state" / "trust.json")
    assert store.why_untrusted(project, project_files(project)) is None  # never trusted
    store.trust(project, project_files(project))
    assert store.why_untrusted(project, project_files(project)) is None
    (project / ".gosling" / "config.toml").write_text('provider = "anthropic"\n')
    (project / ".mcp.json").write_text('{"mcpServers": {}}')
    why = store.why_untrusted(project, project_files(project))
    assert why == (
        ".gosling/config.toml changed since you trusted the folder; "
        ".mcp.json was added since you trusted the folder"
    )


def test_revoke_forgets_the_trusted_folder_a_directory_is_in(project: Path, tmp_path: Path) -> None:
    store = TrustStore(tmp_path / "state" / "trust.json")
    store.trust(project, project_files(project))
    deep = project / "src" / "pkg"
    deep.mkdir(parents=True)
    assert store.revoke(deep) == project.resolve()
    assert store.revoke(deep) is None
    assert store.entries() == []


def test_a_trust_that_cannot_be_saved_fails_and_leaves_no_temp_file(
    project: Path, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    (state / "trust.json").mkdir(parents=True)  # the rename onto it fails
    with pytest.raises(OSError):
        TrustStore(state / "trust.json").trust(project, project_files(project))
    assert [p.name for p in state.iterdir()] == ["trust.json"]  # no .trust.*.tmp left


def test_a_folder_trusted_before_scripts_were_hashed_says_so_and_a_new_script_says_added(
    project: Path, tmp_path: Path
) -> None:
    import json

    (project / "bin").mkdir()
    (project / "bin" / "serve.py").write_text("print('serving')\n")
    (project / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"a": {"command": "python", "args": ["bin/serve.py"]}}})
    )
    store = TrustStore(tmp_path / "trust.json")
    store.trust(project, [p for p in project_files(project) if p.name != "serve.py"])
    data = json.loads((tmp_path / "trust.json").read_text())
    entry = data["projects"][str(project.resolve())]
    assert "bin/serve.py" not in entry["files"]
    assert store.why_untrusted(project, project_files(project)) == (
        "bin/serve.py was added since you trusted the folder"
    )
    del entry["gated"]  # an entry written before trust recorded what it covered
    (tmp_path / "trust.json").write_text(json.dumps(data))
    assert store.why_untrusted(project, project_files(project)) == (
        "you trusted the folder before gosling hashed bin/serve.py, which a trusted command "
        "runs; review it"
    )


def test_a_hand_edited_trust_file_with_a_broken_entry_still_lists_the_good_ones(
    project: Path, tmp_path: Path
) -> None:
    import json

    store = TrustStore(tmp_path / "trust.json")
    store.trust(project, project_files(project))
    data = json.loads((tmp_path / "trust.json").read_text())
    data["projects"]["/somewhere/else"] = "trusted"  # not an entry
    data["projects"]["/another"] = {"files": "all"}
    (tmp_path / "trust.json").write_text(json.dumps(data))
    assert [e.path for e in store.entries()] == [str(project.resolve())]


def test_the_trust_file_lives_in_a_private_directory_made_on_first_use(
    project: Path, tmp_path: Path
) -> None:
    store = TrustStore(tmp_path / "new" / "state" / "trust.json")
    store.trust(project, project_files(project))
    store.trust(project, project_files(project))  # the directory exists now: no error
    assert stat.S_IMODE((tmp_path / "new" / "state").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "new" / "state" / "trust.json").stat().st_mode) == 0o600


def test_each_reason_names_the_file_and_what_happened_to_it(project: Path, tmp_path: Path) -> None:
    import hashlib

    store = TrustStore(tmp_path / "trust.json")
    store.trust(project, project_files(project))
    config = project / ".gosling" / "config.toml"
    recorded = hashlib.sha256(config.read_bytes()).hexdigest()
    # content whose digest sorts below the recorded one, and one above: both are changes
    for wanted_lower in (True, False):
        n = 0
        while True:
            text = f'provider = "openai"\n# {n}\n'
            digest = hashlib.sha256(text.encode()).hexdigest()
            if (digest < recorded) == wanted_lower:
                break
            n += 1
        config.write_text(text)
        assert store.why_untrusted(project, project_files(project)) == (
            ".gosling/config.toml changed since you trusted the folder"
        )
    config.write_text('provider = "openai"\n')
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text("{}")
    assert store.why_untrusted(project, project_files(project)) == (
        ".claude/settings.json was added since you trusted the folder"
    )


def test_a_trusted_file_that_became_unreadable_untrusts_without_an_error(
    project: Path, tmp_path: Path
) -> None:
    store = TrustStore(tmp_path / "trust.json")
    files = project_files(project)
    store.trust(project, files)
    config = project / ".gosling" / "config.toml"
    config.unlink()
    config.mkdir()  # reading it now fails
    assert not store.is_trusted(project, files)
    assert store.why_untrusted(project, files) == (
        ".gosling/config.toml changed since you trusted the folder"
    )


def test_trust_list_shows_when_each_folder_was_trusted_and_says_so_when_unknown(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    from click.testing import CliRunner

    from gosling.agent.cli.main import cli

    monkeypatch.setenv("GOSLING_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TZ", "UTC")
    store = TrustStore.default()
    store.trust(project, project_files(project))
    data = json.loads(store.path.read_text())
    data["projects"][str(project.resolve())]["trusted_at"] = 1_700_000_000
    data["projects"]["/by/hand"] = {"files": {".mcp.json": "0" * 64}}
    for name, when in (("/zero", 0), ("/negative", -5), ("/epoch", 1)):
        data["projects"][name] = {"files": {".mcp.json": "0" * 64}, "trusted_at": when}
    store.path.write_text(json.dumps(data))
    listed = CliRunner().invoke(cli, ["trust", "--list"])
    assert listed.exit_code == 0, listed.output
    assert f"{project.resolve()}  (trusted 2023-11-14 22:13: .gosling/config.toml)" in listed.output
    for unknown in ("/by/hand", "/zero", "/negative"):
        assert f"{unknown}  (trusted at an unknown time: .mcp.json)" in listed.output
    assert "/epoch  (trusted 1970-01-01 00:00: .mcp.json)" in listed.output


def test_the_same_decisions_give_the_same_trust_file_whatever_their_order(
    tmp_path: Path,
) -> None:
    import json

    folders = []
    for name in ("alpha", "beta"):
        folder = tmp_path / name
        (folder / ".git").mkdir(parents=True)
        (folder / ".mcp.json").write_text("{}")
        folders.append(folder)
    first, second = TrustStore(tmp_path / "a.json"), TrustStore(tmp_path / "b.json")
    for store, order in ((first, folders), (second, folders[::-1])):
        for folder in order:
            store.trust(folder, project_files(folder))
    one = json.loads(first.path.read_text())
    two = json.loads(second.path.read_text())
    for data in (one, two):  # times differ; everything else is the same file
        for entry in data["projects"].values():
            entry["trusted_at"] = 0
    assert json.dumps(one) == json.dumps(two)  # key order too: the file diffs cleanly
    assert one["version"] == 2  # the format a reader can check
