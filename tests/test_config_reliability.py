"""Config values that would hurt a run: a site folder that would swallow the store or the
config, non-finite numbers, empty categories, control characters, unsafe base URLs. Each is
one line and exit 2, never a traceback."""

from __future__ import annotations

import errno
import os
import subprocess
import typing
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline import config as config_mod
from pipeline.cli import cli
from pipeline.config import (
    ArxivConfig,
    ConfigError,
    DigestConfig,
    HFConfig,
    RankConfig,
    SiteConfig,
)
from pipeline.store import Store

REPO = Path(__file__).resolve().parents[1]
TOPIC = '[[topics]]\nslug = "t"\nname = { zh = "主题", en = "Topic" }\nkeywords = ["agent"]\n'


def write(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "papertrail.toml"
    path.write_text(text, encoding="utf-8")
    return path


def one_line_error(path: Path) -> str:
    """Run `papertrail status` on the config; it must exit 2 with one line, no traceback."""
    result = CliRunner().invoke(cli, ["--config", str(path), "status"])
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    (line,) = result.output.splitlines()
    assert line.startswith("papertrail: config error: ") and str(path) in line
    return line


# -- [site] output must not overlap what the build's cleanup would delete -------------------------


# (TOML, the resolved output the error names, the folder it overlaps, or folders joined by
# |); {p} is the config file's folder, {tmp} the one above it, {repo} the project root.
OVERLAPS = {
    "equal to the store": ('output = "data"', "{p}/data", "{p}/data"),
    "inside the store": ('output = "data/site"', "{p}/data/site", "{p}/data"),
    "containing the store": ('output = "site"\n[store]\npath = "site/data"', "{p}/site",
                             "{p}/site/data"),
    "equal to the config's folder": ('output = "."', "{p}", "{p}"),
    "containing the config's folder": ('output = ".."', "{tmp}", "{p}"),
    "the store through ..": ('output = "out/../data"', "{p}/data", "{p}/data"),
    "the store through a symlink": ('output = "link"', "{p}/data", "{p}/data"),
    "equal to the project root": ('output = "{repo}"', "{repo}", "{repo}"),
    # Where the checkout sits beside the test's folder (both under /tmp, say), the config's
    # folder is inside too, and either is the right one to name.
    "containing the project root": ('output = "{repo}/.."', str(REPO.parent), "{repo}|{p}"),
    "equal to the theme": ('output = "{repo}/theme"', "{repo}/theme", "{repo}/theme"),
    "inside the theme": ('output = "{repo}/theme/static"', "{repo}/theme/static",
                         "{repo}/theme"),
    "inside a store elsewhere": ('output = "{tmp}/store/www"\n[store]\npath = "{tmp}/store"',
                                 "{tmp}/store/www", "{tmp}/store"),
}


@pytest.mark.parametrize("case", OVERLAPS)
def test_a_site_output_overlapping_the_store_config_or_project_is_refused(tmp_path, case):
    project = tmp_path / "project"
    project.mkdir()
    (project / "link").symlink_to(project / "data")
    text, output, other = (part.format(p=project, tmp=tmp_path, repo=REPO)
                           for part in OVERLAPS[case])
    line = one_line_error(write(project, f"[site]\n{text}\n"))
    assert "site.output" in line
    assert f"resolved to {output}, it " in line, line
    assert any(f": {folder};" in line for folder in other.split("|")), line
    assert "allowed: a folder of its own" in line


def test_the_overlap_error_says_which_folder_and_how(tmp_path):
    line = one_line_error(write(tmp_path, '[site]\noutput = "data/site"\n'))
    assert f"it is inside the store ([store] path): {tmp_path / 'data'};" in line


@pytest.mark.parametrize("text", [
    "",  # the defaults: output/ beside data/
    '[site]\noutput = "public/site"\n',
    '[store]\npath = "state/data"\n[site]\noutput = "state/site"\n',
    '[site]\noutput = "../elsewhere"\n',
])
def test_a_sane_site_output_still_loads(tmp_path, text):
    path = write(tmp_path / "project", text)
    cfg = config_mod.load(path)
    assert not cfg.output_path.resolve().is_relative_to(cfg.store_path.resolve())
    result = CliRunner().invoke(cli, ["--config", str(path), "status"])
    assert result.exit_code == 0, result.output


def test_an_output_folder_in_the_project_root_is_allowed():
    cfg = config_mod.from_dict({"site": {"output": "output"}}, REPO / "papertrail.toml")
    assert cfg.output_path == REPO / "output"


# -- numbers: inf and nan ----------------------------------------------------------------------


def _float_keys() -> list[tuple[str, str]]:
    sections = {"site": SiteConfig, "sources.arxiv": ArxivConfig, "sources.hf": HFConfig,
                "digest": DigestConfig, "rank": RankConfig}
    return [(section, name) for section, cls in sections.items()
            for name, tp in typing.get_type_hints(cls).items() if tp is float]


@pytest.mark.parametrize(("section", "key"), _float_keys())
@pytest.mark.parametrize("value", ["inf", "-inf", "nan"])
def test_every_float_key_refuses_inf_and_nan_with_its_range(tmp_path, section, key, value):
    path = write(tmp_path, f"[{section}]\n{key} = {value}\n")
    with pytest.raises(ConfigError) as err:
        config_mod.load(path)
    message = str(err.value)
    cls = {"sources.arxiv": ArxivConfig, "sources.hf": HFConfig, "digest": DigestConfig,
           "site": SiteConfig, "rank": RankConfig}[section]
    allowed = next(f for f in cls.__dataclass_fields__.values() if f.name == key)
    assert f"{section}.{key}" in message and "finite number" in message
    assert f"allowed: {allowed.metadata['allowed']}" in message


def test_there_are_float_keys_to_check():
    assert ("sources.arxiv", "delay_seconds") in _float_keys()
    assert ("digest", "temperature") in _float_keys()


def test_inf_through_the_cli_is_one_line(tmp_path):
    line = one_line_error(write(tmp_path, "[sources.arxiv]\nmax_run_seconds = inf\n"))
    assert "sources.arxiv.max_run_seconds = inf" in line and "seconds ≥ 1" in line


# -- categories, control characters, base_url -----------------------------------------------


def test_empty_arxiv_categories_name_the_key_and_what_is_allowed(tmp_path):
    line = one_line_error(write(tmp_path, "[sources.arxiv]\ncategories = []\n"))
    assert "sources.arxiv.categories = ()" in line or "sources.arxiv.categories = []" in line
    assert "at least one category" in line and "enabled = false" in line


CONTROL = [
    ('[site]\ntitle = "My \\u0007radar"\n', "site.title", "U+0007"),
    ('[site]\ntitle = "x\\u001b[31mred"\n', "site.title", "U+001B"),
    ('[site]\ntitle = "two\\nlines"\n', "site.title", "U+000A"),
    ('[site]\ntitle = "c1 \\u0085"\n', "site.title", "U+0085"),
    ('[[topics]]\nslug = "t"\nname = { zh = "主题", en = "To\\u0000pic" }\nkeywords = ["x"]\n',
     "topics[0].name.en", "U+0000"),
    (TOPIC + 'description = "bell \\u0007"\n', "topics[0].description", "U+0007"),
    ('[[topics]]\nslug = "t"\nname = { zh = "主题", en = "Topic" }\nkeywords = ["a\\u007fb"]\n',
     "topics[0].keywords", "U+007F"),
    ('[digest]\nmodel = "gpt\\u0008"\n', "digest.model", "U+0008"),
]


@pytest.mark.parametrize(("text", "key", "char"), CONTROL)
def test_control_characters_in_config_text_are_refused(tmp_path, text, key, char):
    line = one_line_error(write(tmp_path, text))
    assert key in line and f"control character {char}" in line and "allowed: " in line


def test_a_topic_description_may_span_lines(tmp_path):
    path = write(tmp_path, TOPIC + 'description = """One line,\n\tand another."""\n')
    assert config_mod.load(path).topics[0].description == "One line,\n\tand another."


@pytest.mark.parametrize("url", ["javascript:alert(1)", "ftp://example.org", "https://",
                                 "https://you.github.io/my repo", "//you.github.io",
                                 'https://x.io/"><script>', "data:text/html,hi"])
def test_a_base_url_that_is_not_http_is_refused(tmp_path, url):
    line = one_line_error(write(tmp_path, f"[site]\nbase_url = '{url}'\n"))
    assert "site.base_url" in line and "empty, or an http(s) URL" in line


@pytest.mark.parametrize("url", ["", "https://you.github.io/repo", "http://127.0.0.1:8000/",
                                 "HTTPS://Example.org"])
def test_an_empty_or_http_base_url_loads(tmp_path, url):
    assert config_mod.load(write(tmp_path, f"[site]\nbase_url = '{url}'\n")).site.base_url == url



# -- the store on a full, read-only or immutable disk: one line, exit 1 ---------------------------


@pytest.fixture
def tmpfs(tmp_path):
    """mount(options) → a fresh tmpfs folder; skipped where mounting is impossible."""
    mounted: list[Path] = []

    def mount(options: str) -> Path:
        target = tmp_path / f"tmpfs{len(mounted)}"
        target.mkdir()
        try:
            done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(target)],
                                  capture_output=True, text=True, check=False)
        except FileNotFoundError:
            pytest.skip("no mount command here")
        if done.returncode:
            pytest.skip(f"cannot mount a tmpfs here (needs root): {done.stderr.strip()}")
        mounted.append(target)
        return target

    yield mount
    for target in reversed(mounted):
        subprocess.run(["umount", "--lazy", str(target)], check=False)


def _ingest(tmp_path: Path, store: Path, api_url: str) -> tuple[int, str]:
    """Exit code and stderr of `papertrail ingest --source arxiv` into `store`."""
    path = write(tmp_path, f'[store]\npath = "{store}"\n[sources.arxiv]\napi_url = "{api_url}"\n'
                 f'oai_url = "{api_url.removesuffix("/api/query")}/oai"\n'
                 f'feed_url = "{api_url.removesuffix("/api/query")}/rss/"\n'
                 "delay_seconds = 0\nbackfill_days = 365\n[sources.hf]\nenabled = false\n")
    result = CliRunner().invoke(cli, ["--config", str(path), "ingest", "--source", "arxiv"])
    assert isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stderr


def test_a_read_only_store_is_one_line_naming_the_lock_file(tmp_path, tmpfs):
    store = tmpfs("ro")
    code, output = _ingest(tmp_path, store, "http://127.0.0.1:9/never-asked")
    assert code == 1
    (line,) = output.splitlines()
    assert f"{store / '.lock'}" in line and "read-only" in line.lower()
    assert "mount it read-write" in line


def test_an_immutable_lock_file_is_one_line_naming_it(tmp_path):
    store = tmp_path / "data"
    store.mkdir()
    (store / ".lock").touch()
    if subprocess.run(["chattr", "+i", str(store / ".lock")], capture_output=True,
                      check=False).returncode:
        pytest.skip("chattr +i is not supported here")
    try:
        code, output = _ingest(tmp_path, store, "http://127.0.0.1:9/never-asked")
    finally:
        subprocess.run(["chattr", "-i", str(store / ".lock")], check=False)
    assert code == 1
    (line,) = output.splitlines()
    assert str(store / ".lock") in line and "not permitted" in line and "chattr -i" in line


def test_a_full_disk_is_one_line_naming_the_store(tmp_path, tmpfs, replay):
    store = tmpfs("size=64k")
    code, output = _ingest(tmp_path, store, replay.url)
    assert code == 1
    (line,) = output.splitlines()
    assert "No space left on device" in line and str(store) in line
    assert "free space" in line


def test_a_config_path_that_is_a_folder_is_a_config_error(tmp_path):
    result = CliRunner().invoke(cli, ["--config", str(tmp_path), "status"])
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit)
    assert f"{tmp_path}: cannot read the config file: Is a directory" in result.output


def test_a_store_this_user_may_not_write_is_one_line_saying_so(tmp_path, monkeypatch):
    # Tests run as root, whom permissions do not stop: the kernel's answer, as it would come.
    lock = tmp_path / "data" / ".lock"

    def refuse(self):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(lock))

    monkeypatch.setattr(Store, "lock", refuse)
    code, output = _ingest(tmp_path, tmp_path / "data", "http://127.0.0.1:9/never-asked")
    assert code == 1
    assert output == (f"papertrail: Permission denied: {lock}: give this user read and write "
                      "access to it (or run as its owner), then run again\n")
