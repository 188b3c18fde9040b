"""The promises of .github/workflows/: zizmor (offline) finds nothing, and the YAML says what
FORKING.md and docs/DATA.md say it does."""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pipeline import config as config_mod
from pipeline import schedule
from pipeline.cli import cli

REPO = Path(__file__).resolve().parents[1]
WORKFLOWS = REPO / ".github" / "workflows"
NAMES = ["update.yml", "ci.yml", "lock.yml"]
DEPENDABOT = REPO / ".github" / "dependabot.yml"
PINNED = re.compile(r"^\s*(?:-\s+)?uses:\s*[\w.-]+/[\w./-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+\s*$")


def load(name: str) -> dict:
    doc = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    doc["on"] = doc.pop(True, doc.get("on"))  # YAML 1.1 reads a bare `on` key as True
    return doc


def steps(doc: dict) -> list[tuple[str, dict, dict]]:
    return [(job_id, job, step) for job_id, job in doc["jobs"].items()
            for step in job.get("steps", [])]


def _zizmor() -> str:
    beside = Path(sys.executable).with_name("zizmor")
    found = str(beside) if beside.exists() else shutil.which("zizmor")
    assert found, "zizmor is not installed (it is in the test extra: pip install -e '.[test]')"
    return found


def test_the_tests_read_every_workflow():
    assert sorted(NAMES) == sorted(p.name for p in WORKFLOWS.iterdir())


@pytest.mark.parametrize("path", [*(WORKFLOWS / n for n in NAMES), DEPENDABOT],
                         ids=lambda p: p.name)
@pytest.mark.parametrize("persona", ["regular", "pedantic", "auditor"])
def test_zizmor_offline_reports_no_findings(path, persona):
    # --strict-collection: a file zizmor cannot parse is an error, not a silent skip. The
    # auditor's one finding is justified inline (# zizmor: ignore[...] beside its reason).
    done = subprocess.run([_zizmor(), "--offline", "--strict-collection", "--no-progress",
                           f"--persona={persona}", "--format", "json", str(path)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout) == []


def _uses(doc: dict) -> list[str]:
    """Every action and reusable workflow the document runs."""
    return [u for job in doc["jobs"].values()
            for u in [job.get("uses"), *(s.get("uses") for s in job.get("steps", []))] if u]


def _actions_updater() -> dict:
    """dependabot.yml's entry that keeps .github/workflows/ current."""
    config = yaml.safe_load(DEPENDABOT.read_text(encoding="utf-8"))
    assert config["version"] == 2
    (entry,) = [u for u in config["updates"] if u["package-ecosystem"] == "github-actions"]
    return entry


@pytest.mark.parametrize("name", NAMES)
def test_every_action_is_pinned_and_kept_current_by_dependabot(name):
    """Dependabot moves a `@<sha> # vX.Y.Z` pin and its comment together, weekly, in one
    pull request; an action it does not cover would keep its pin for ever."""
    lines = [line for line in (WORKFLOWS / name).read_text(encoding="utf-8").splitlines()
             if re.match(r"^\s*(?:-\s+)?uses:", line)]
    for line in lines:
        assert PINNED.match(line), f"{name}: not pinned by SHA with # vX.Y.Z: {line}"
    uses = _uses(load(name))
    # none hides where the line check misses it (a flow mapping, a quoted key)
    assert uses and len(uses) == len(lines)
    entry = _actions_updater()
    # "/" is where Dependabot looks for .github/workflows/
    assert entry.get("directory") == "/" or "/" in entry.get("directories", [])
    assert entry["schedule"]["interval"] == "weekly"
    assert entry["cooldown"]["default-days"] >= 7  # a hijacked release gets noticed first
    assert any(g.get("patterns") == ["*"] for g in entry["groups"].values())  # one PR
    for use in uses:
        action = use.split("@")[0]
        owner_repo = "/".join(action.split("/")[:2])  # actions/x/sub: the repository's
        assert not action.startswith((".", "docker://")), f"{name}: Dependabot skips {use}"
        allowed = [a["dependency-name"] for a in entry.get("allow", [])] or ["*"]
        assert any(fnmatch.fnmatch(owner_repo, a) for a in allowed), use
        for rule in entry.get("ignore", []):  # a rule with no versions ignores every one
            assert not (fnmatch.fnmatch(owner_repo, rule["dependency-name"])
                        and not {"versions", "update-types"} & rule.keys()), use


@pytest.mark.parametrize("name", NAMES)
def test_least_privilege_and_no_dangerous_triggers(name):
    doc = load(name)
    assert doc["permissions"] == {}
    assert not {"pull_request_target", "workflow_run"} & set(doc["on"])
    for job_id, job in doc["jobs"].items():
        assert "permissions" in job, f"{job_id} states its own permissions"
        assert "write-all" not in str(job["permissions"])


@pytest.mark.parametrize("name", NAMES)
def test_expressions_and_secrets_reach_shell_only_through_env(name):
    for job_id, _job, step in steps(load(name)):
        assert "${{" not in step.get("run", ""), f"{job_id}: expression inside run: {step}"
        for key, value in step.items():
            if key != "env":
                assert "secrets." not in json.dumps(value), f"{job_id}: secret outside env"


@pytest.mark.parametrize("name", NAMES)
def test_checkout_leaves_no_credentials_in_the_git_config(name):
    # `pip install` and `papertrail run` handle untrusted content: .git/config holds no token
    checkouts = [step for _, _, step in steps(load(name))
                 if step.get("uses", "").startswith("actions/checkout@")]
    assert checkouts
    for step in checkouts:
        assert step["with"]["persist-credentials"] is False


TOKEN = re.compile(r"github\.token|secrets\.GITHUB_TOKEN")


def _token_steps(name: str) -> list[dict]:
    """The steps that may hold the token: restore and save (git, to this repository), the
    Pages check (the Pages API, read only), the keepalive (the Actions API) and the lock's
    proposal (a push and a pull request)."""
    found = []
    for job_id, _job, step in steps(load(name)):
        run = step.get("run", "")
        if run.startswith(("papertrail data restore", "papertrail data save")) or (
                (job_id, name) in {("keepalive", "update.yml"), ("propose", "lock.yml")}
                and "env" in step) or (name == "update.yml" and step.get("id") == "pages_on"):
            found.append(step)
    return found


def _credential_steps() -> list[dict]:
    """The steps whose git asks for the token through the env's credential helper."""
    return [step for name in NAMES for step in _token_steps(name) if "GIT_CONFIG_COUNT" in
            step.get("env", {})]


@pytest.mark.parametrize("name", NAMES)
def test_the_token_reaches_only_the_steps_that_need_it_through_their_env(name):
    doc = load(name)
    assert not TOKEN.search(json.dumps({k: v for k, v in doc.items() if k != "jobs"}))
    allowed = _token_steps(name)
    for job_id, job in doc["jobs"].items():
        assert not TOKEN.search(json.dumps({k: v for k, v in job.items() if k != "steps"}))
        for step in job.get("steps", []):
            outside_env = {k: v for k, v in step.items() if k != "env"}
            assert not TOKEN.search(json.dumps(outside_env)), f"{job_id}: {step}"
            if TOKEN.search(json.dumps(step.get("env", {}))):
                assert step in allowed, f"{job_id}: the token in a step that needs none: {step}"
    assert len(allowed) == {"update.yml": 4, "ci.yml": 0, "lock.yml": 1}[name]


def _fill(env: dict[str, str], url: str, repo: Path) -> str:
    """What git's credential machinery answers for `url` in a step with `env`."""
    values = {"${{ github.token }}": "t0ken", "${{ github.server_url }}": "https://github.com",
              "${{ github.repository }}": "owner/repo"}
    step_env = {k: re.sub(r"\$\{\{ [\w.]+ \}\}", lambda m: values.get(m.group(0), ""), str(v))
                for k, v in env.items()}
    done = subprocess.run(["git", "-C", str(repo), "credential", "fill"], input=f"url={url}\n\n",
                          capture_output=True, text=True, check=False,
                          env={"PATH": os.environ["PATH"], "HOME": str(repo),
                               "GIT_TERMINAL_PROMPT": "0", **step_env})
    return done.stdout


@pytest.mark.parametrize("step", _credential_steps(), ids=lambda s: s["run"].split()[2])
def test_git_offers_the_token_to_this_repository_alone(step, tmp_path):
    if not shutil.which("git"):
        pytest.skip("git is not installed")
    subprocess.run(["git", "init", "--quiet", str(tmp_path)], check=True)
    # actions/checkout's origin is SERVER/OWNER/REPO, which `data save` pushes to
    assert "password=t0ken" in _fill(step["env"], "https://github.com/owner/repo", tmp_path)
    for other in ("https://github.com/upstream/repo.git", "https://github.com/owner/repo2",
                  "https://evil.example/owner/repo"):  # e.g. seed_from: read anonymously
        assert "t0ken" not in _fill(step["env"], other, tmp_path), other


def test_update_runs_on_a_schedule_and_by_hand_one_at_a_time():
    # which hours: tests/test_schedule.py (arXiv's clock, summer and winter time)
    doc = load("update.yml")
    for cron in (s["cron"] for s in doc["on"]["schedule"]):
        minute = cron.split()[0]
        assert minute.isdigit() and minute != "0", cron  # GitHub delays :00 runs most
    assert "workflow_dispatch" in doc["on"]


def test_a_dispatched_run_waits_its_turn_and_no_later_run_replaces_it():
    """GitHub runs one run of a concurrency group at a time and, by default, keeps one
    pending: a new one cancels it. The group is the same for every trigger (no
    expression), so no two runs ever write the data branch, notify or deploy at once;
    `queue: max` keeps every pending run (FIFO, up to 100), so an hourly run queued after
    a Run workflow with seed_from no longer cancels it. cancel-in-progress stays false: a
    run cancelled halfway could leave its data unpushed (and GitHub refuses it with max)."""
    doc = load("update.yml")
    assert doc["concurrency"] == {"group": "papertrail-update", "cancel-in-progress": False,
                                  "queue": "max"}
    for job_id, job in doc["jobs"].items():  # a job-level group would not wait for it
        assert "concurrency" not in job, job_id
    # actionlint does not know `queue` yet: ci.yml ignores that one message and no other
    (lint,) = [s["run"] for s in load("ci.yml")["jobs"]["actionlint"]["steps"] if "run" in s]
    (pattern,) = re.findall(r"-ignore '([^']*)'", lint)
    said = 'unexpected key "{}" for "concurrency" section. expected one of ' \
           '"cancel-in-progress", "group"'
    assert re.search(pattern, said.format("queue"))
    assert not re.search(pattern, said.format("queue-size"))
    assert not re.search(pattern, said.format("cancel-in-progres"))


def test_the_keepalive_re_enables_every_scheduled_workflow_with_actions_write_alone():
    jobs = load("update.yml")["jobs"]
    keep = jobs["keepalive"]
    assert keep["permissions"] == {"actions": "write"}
    # once a weekday, on the OAI-PMH slot, not every hour; no checkout, no code of ours runs
    oai = next(c for c, kind in schedule.CRONS.items() if kind == "oai")
    assert keep["if"] == ("${{ github.event_name == 'schedule' && "
                          f"github.event.schedule == '{oai}' }}}}")
    (step,) = keep["steps"]
    assert "uses" not in step and step["env"] == {"GH_TOKEN": "${{ github.token }}"}
    assert ('gh api --method PUT "repos/$GITHUB_REPOSITORY/actions/workflows/$workflow/enable"'
            in step["run"])
    listed = re.search(r"for workflow in ([\w. ]+);", step["run"]).group(1).split()
    assert sorted(listed) == sorted(n for n in NAMES if "schedule" in load(n)["on"])


def test_the_update_installs_the_locked_versions_with_their_hashes():
    build = load("update.yml")["jobs"]["build"]["steps"]
    (install,) = [s for s in build if "pip install" in s.get("run", "")]
    assert install["run"].splitlines() == [
        "python -m pip install --quiet --require-hashes -r requirements.lock",
        "python -m pip install --quiet --no-deps -e .",
    ]
    runs = [s.get("run", "") for s in build]
    assert runs.index(install["run"]) < next(i for i, r in enumerate(runs) if "papertrail" in r)
    (setup,) = [s for s in build if s.get("uses", "").startswith("actions/setup-python@")]
    assert setup["with"]["cache-dependency-path"] == "requirements.lock"


def _pins() -> dict[str, tuple[str, list[str]]]:
    """requirements.lock: name -> (version, hashes)."""
    text = (REPO / "requirements.lock").read_text(encoding="utf-8")
    pins = {}
    for block in re.split(r"\n(?=\S)", text):
        if m := re.match(r"([A-Za-z0-9_.-]+)==(\S+)", block):
            pins[canonical(m.group(1))] = (m.group(2), re.findall(r"--hash=sha256:[0-9a-f]{64}",
                                                                  block))
    return pins


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_the_lock_pins_every_runtime_dependency_within_its_range_with_hashes():
    import tomllib

    from packaging.requirements import Requirement

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pins = _pins()
    assert pins and all(hashes for _, hashes in pins.values())  # --require-hashes needs all
    for spec in project["dependencies"]:
        req = Requirement(spec)
        assert canonical(req.name) in pins, f"requirements.lock lacks {req.name}: `make lock`"
        version = pins[canonical(req.name)][0]
        assert req.specifier.contains(version), f"{req.name}=={version} is not {req.specifier}"
    # the test tools stay out of production installs
    assert not {"pytest", "mypy", "ruff", "playwright"} & pins.keys()


def test_the_lock_workflow_tests_the_new_pins_before_a_pull_request_proposes_them():
    doc = load("lock.yml")
    assert "schedule" in doc["on"] and "workflow_dispatch" in doc["on"]
    relock, propose = doc["jobs"]["relock"], doc["jobs"]["propose"]
    # the new packages run where the token can write nothing
    assert relock["permissions"] == {"contents": "read"}
    assert propose["permissions"] == {"contents": "write", "pull-requests": "write"}
    assert propose["needs"] == "relock"
    runs = "\n".join(s.get("run", "") for s in relock["steps"])
    assert runs.index("make lock") < runs.index("--require-hashes -r requirements.lock") < \
        runs.index("make test")
    make = (REPO / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^lock: .*\n(\t.*\n)*\t\$\(BIN\)/uv pip compile pyproject\.toml "
                     r"\$\(LOCK_ARGS\) .*-o requirements\.lock$", make, re.M)
    assert "--generate-hashes" in make
    (pr,) = [s for s in propose["steps"] if "gh pr create" in s.get("run", "")]
    assert "git push --force origin lock/update" in pr["run"]


def test_update_permissions_per_job():
    jobs = load("update.yml")["jobs"]
    assert jobs["build"]["permissions"] == {"contents": "write", "pages": "read"}
    assert jobs["deploy"]["permissions"] == {"pages": "write", "id-token": "write"}
    assert jobs["deploy"]["needs"] == "build"


def test_update_steps_are_papertrail_commands_in_order():
    build = load("update.yml")["jobs"]["build"]["steps"]
    runs = [s["run"] for s in build if "run" in s]
    order = ["papertrail data restore", "papertrail run --publish", "papertrail data compact",
             "papertrail data save", "papertrail data summary"]
    at = [next(i for i, r in enumerate(runs) if r.startswith(cmd)) for cmd in order]
    assert at == sorted(at)
    assert '>> "$GITHUB_STEP_SUMMARY"' in runs[at[-1]]
    for sub in ("restore", "save", "compact", "summary"):
        assert sub in cli.commands["data"].commands  # type: ignore[attr-defined]
    # the site goes up right after it is built, before anything that may fail after it
    uses = [s.get("uses", "").split("@")[0] for s in build]
    upload = uses.index("actions/upload-pages-artifact")
    assert "run" in build[upload - 1] and build[upload - 1]["run"].startswith("papertrail run")
    assert upload < build.index(next(s for s in build if s.get("run") == "papertrail notify"))
    deploy = load("update.yml")["jobs"]["deploy"]["steps"]
    assert [s["uses"].split("@")[0] for s in deploy] == ["actions/deploy-pages"]


def test_update_passes_the_digest_settings_and_the_pages_url_through_env():
    steps = load("update.yml")["jobs"]["build"]["steps"]
    (at,) = [i for i, s in enumerate(steps) if s.get("run", "").startswith("papertrail run")]
    (pages,) = [s for s in steps[:at]
                if s.get("uses", "").startswith("actions/configure-pages@")]
    assert steps[at]["env"] == {
        **{name: f"${{{{ secrets.{name} }}}}" for name in config_mod.WORKFLOW_KEY_ENVS},
        "PAPERTRAIL_DIGEST_BASE_URL": "${{ vars.PAPERTRAIL_DIGEST_BASE_URL }}",
        "PAPERTRAIL_DIGEST_MODEL": "${{ vars.PAPERTRAIL_DIGEST_MODEL }}",
        "PAPERTRAIL_SITE_BASE_URL": f"${{{{ steps.{pages['id']}.outputs.base_url }}}}",
        "PAPERTRAIL_SITE_SOURCE_URL": "${{ github.server_url }}/${{ github.repository }}",
        schedule.TRIGGER_ENV: "${{ github.event_name }}",  # which runs the schedule started
    }
    assert {"PAPERTRAIL_SITE_BASE_URL", "PAPERTRAIL_SITE_SOURCE_URL"} <= \
        config_mod.ENV_OVERRIDES.keys()


def test_every_digest_recipe_gets_its_key_in_the_update_workflow(tmp_path):
    import tomllib

    build = load("update.yml")["jobs"]["build"]["steps"]
    (run,) = [s for s in build if s.get("run", "").startswith("papertrail run")]
    text = (REPO / "docs" / "DIGESTS.md").read_text(encoding="utf-8")
    recipes = [b for b in re.findall(r"```toml\n(.*?)```", text, re.S) if "[digest]" in b]
    assert len(recipes) >= 6  # OpenAI, DeepSeek, DashScope, Ollama, vLLM, a server for Actions
    forking = (REPO / "FORKING.md").read_text(encoding="utf-8")
    for block in recipes:
        name = config_mod.from_dict(tomllib.loads(block), tmp_path / "x.toml").digest.api_key_env
        # the step's variable of that name holds the repository secret of that name
        assert run["env"].get(name) == f"${{{{ secrets.{name} }}}}", block
        assert f"`{name}`" in forking, name
    # no secret reaches any other step (but notify's own: test_notify_…)
    for step in build:
        if step is not run and step.get("run") != "papertrail notify":
            assert "secrets." not in json.dumps(step), step.get("name")


def test_notify_runs_after_the_build_before_the_save_with_its_secrets_alone(tmp_path):
    import dataclasses
    import tomllib

    build = load("update.yml")["jobs"]["build"]["steps"]
    runs = [s.get("run", "") for s in build]
    (notify,) = [s for s in build if s.get("run") == "papertrail notify"]
    at = runs.index("papertrail notify")
    assert runs.index("papertrail run --publish") < at
    assert at < next(i for i, r in enumerate(runs) if r.startswith("papertrail data save"))
    (restore,) = [s for s in build if s.get("run", "").startswith("papertrail data restore")]
    assert notify["if"] == f"${{{{ !cancelled() && steps.{restore['id']}.outcome == 'success' }}}}"
    secrets = {k: v for k, v in notify["env"].items() if "secrets." in v}
    assert secrets == {name: f"${{{{ secrets.{name} }}}}"
                       for name in config_mod.WORKFLOW_NOTIFY_ENVS}
    assert notify["env"]["PAPERTRAIL_SITE_BASE_URL"].endswith(".outputs.base_url }}")
    # Each kind's default variable is one the step passes; so is every variable the
    # documented channels name.
    for kind, cls in config_mod.CHANNEL_KINDS.items():
        for f in dataclasses.fields(cls):
            if f.name.endswith("_env") and f.default:
                assert f.default in config_mod.WORKFLOW_NOTIFY_ENVS, (kind, f.name)
    text = (REPO / "docs" / "CONFIG.md").read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```toml\n(.*?)```", text, re.S) if "[[notify]]" in b]
    kinds = set()
    for block in blocks:
        for channel in config_mod.from_dict(tomllib.loads(block), tmp_path / "x.toml").notify:
            kinds.add(channel.kind)
            for f in dataclasses.fields(channel):
                name = getattr(channel, f.name)
                if f.name.endswith("_env") and name:
                    assert notify["env"].get(name) == f"${{{{ secrets.{name} }}}}", name
                    assert f"`{name}`" in (REPO / "FORKING.md").read_text(encoding="utf-8")
    assert kinds == set(config_mod.CHANNEL_KINDS)


def test_a_key_name_the_workflow_does_not_pass_is_named_in_actions(monkeypatch):
    from pipeline.config import DigestConfig

    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    told = DigestConfig(api_key_env="MY_KEY").no_key
    assert told.startswith("no API key: $MY_KEY is not set (the update workflow passes only")
    assert all(name in told for name in config_mod.WORKFLOW_KEY_ENVS)
    assert DigestConfig(api_key_env="DEEPSEEK_API_KEY").no_key == \
        "no API key: $DEEPSEEK_API_KEY is not set"
    monkeypatch.delenv("GITHUB_ACTIONS")
    assert DigestConfig(api_key_env="MY_KEY").no_key == "no API key: $MY_KEY is not set"


def test_saving_and_the_summary_happen_even_after_a_failed_run_step():
    build = load("update.yml")["jobs"]["build"]["steps"]
    (restore,) = [s for s in build if s.get("run", "").startswith("papertrail data restore")]
    for step in build:
        run = step.get("run", "")
        if run.startswith(("papertrail data compact", "papertrail data save")):
            # ... but only a store that was restored from the branch first
            assert step["if"] == (f"${{{{ !cancelled() && steps.{restore['id']}.outcome == "
                                  "'success' }}")
        elif run.startswith("papertrail data summary"):
            assert step["if"] == "${{ !cancelled() }}"


def test_ci_runs_the_readme_test_command_with_pip_caching_and_actionlint():
    doc = load("ci.yml")
    assert {"push", "pull_request"} <= set(doc["on"])
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "$ make test" in readme
    test_steps = doc["jobs"]["test"]["steps"]
    assert any(s.get("run") == "make test" for s in test_steps)
    (setup,) = [s for s in test_steps if s.get("uses", "").startswith("actions/setup-python@")]
    assert setup["with"]["cache"] == "pip"
    lint = [s["run"] for s in doc["jobs"]["actionlint"]["steps"] if "run" in s]
    assert any(re.search(r"actionlint@v\d+\.\d+\.\d+", r) for r in lint)


def _step(job: str, key: str, value: str) -> dict:
    (found,) = [s for s in load("update.yml")["jobs"][job]["steps"]
                if str(s.get(key, "")).startswith(value)]
    return found


def test_the_site_is_uploaded_and_deployed_whenever_it_built_and_pages_is_on():
    """Notify or the save failing after the build (a channel's outage, a rejected push)
    fails the build job, but the site it built still goes up."""
    doc = load("update.yml")
    build, deploy = doc["jobs"]["build"], doc["jobs"]["deploy"]
    upload = _step("build", "uses", "actions/upload-pages-artifact@")
    made = _step("build", "run", "papertrail run --publish")
    check = _step("build", "id", "pages_on")
    assert upload["if"] == (f"${{{{ !cancelled() && steps.{made['id']}.outcome == 'success' "
                            f"&& steps.{check['id']}.outcome == 'success' }}}}")
    assert set(re.findall(r"steps\.(\w+)\.", upload["if"])) == {made["id"], check["id"]}
    assert build["outputs"] == {"site": f"${{{{ steps.{upload['id']}.outcome }}}}"}
    # status functions: without one, `if` means success() && …, so a failed notify or save
    # (after the upload) would skip the deploy
    assert deploy["if"] == "${{ !cancelled() && needs.build.outputs.site == 'success' }}"
    # the save does not wait on Pages or the upload: the data is saved either way
    for run in ("papertrail notify", "papertrail data compact", "papertrail data save"):
        assert set(re.findall(r"steps\.(\w+)\.", _step("build", "run", run)["if"])) == \
            {"restore"}


def test_a_fork_without_pages_gets_one_message_and_the_run_goes_on():
    check = _step("build", "id", "pages_on")
    assert check["continue-on-error"] is True
    assert check["env"] == {"GH_TOKEN": "${{ github.token }}"}
    steps_ = load("update.yml")["jobs"]["build"]["steps"]
    configure = _step("build", "uses", "actions/configure-pages@")
    assert steps_.index(check) < steps_.index(configure)
    assert configure["if"] == f"${{{{ steps.{check['id']}.outcome == 'success' }}}}"


GH = '''#!{python}
"""`gh api [--method M] PATH [--paginate] [--jq EXPR]` answered from ANSWERS (JSON: "M PATH"
-> [status, body]; absent: 404), as gh answers: the body on stdout (through jq -r with
--jq), `gh: <reason> (HTTP n)` on stderr and exit 1 on an HTTP error. Calls are logged."""
import json, subprocess, sys
args = sys.argv[2:]
method = args[args.index("--method") + 1] if "--method" in args else "GET"
path = next(a for a in args if a.startswith("repos/"))
with open({log!r}, "a") as log:
    log.write(f"{{method}} {{path}}\\n")
status, body = json.load(open({answers!r})).get(f"{{method}} {{path}}", [404, None])
if status >= 400:
    sys.exit(print(f"gh: HTTP error (HTTP {{status}})", file=sys.stderr) or 1)
text = json.dumps(body)
if "--jq" in args:
    text = subprocess.run(["jq", "-r", args[args.index("--jq") + 1]], input=text,
                          capture_output=True, text=True, check=True).stdout
sys.stdout.write(text)
'''


def _run_with_gh(script: str, answers: dict[str, list], tmp_path: Path
                 ) -> tuple[subprocess.CompletedProcess[str], list[str], str]:
    """A step's script as Actions runs it (bash -eo pipefail) against a `gh` answering
    `answers`: the process, the API calls made, the job summary written."""
    if not shutil.which("jq"):
        pytest.skip("jq is not installed")
    bin_, log, summary = tmp_path / "bin", tmp_path / "calls", tmp_path / "summary.md"
    bin_.mkdir()
    (tmp_path / "answers.json").write_text(json.dumps(answers), encoding="utf-8")
    gh = bin_ / "gh"
    gh.write_text(GH.format(python=sys.executable, log=str(log),
                            answers=str(tmp_path / "answers.json")), encoding="utf-8")
    gh.chmod(0o755)
    done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
                          capture_output=True, text=True, check=False,
                          env={"PATH": f"{bin_}:{os.environ['PATH']}", "GH_TOKEN": "t",
                               "GITHUB_REPOSITORY": "owner/repo",
                               "GITHUB_STEP_SUMMARY": str(summary)})
    calls = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    return done, calls, summary.read_text(encoding="utf-8") if summary.exists() else ""


PAGES = "GET repos/owner/repo/pages"


@pytest.mark.parametrize("answer", [[404, {"message": "Not Found"}],
                                    [200, {"build_type": "legacy"}]],
                         ids=["pages off", "built from a branch"])
def test_the_pages_check_names_the_setting_once(answer, tmp_path):
    done, calls, summary = _run_with_gh(_step("build", "id", "pages_on")["run"],
                                        {PAGES: answer}, tmp_path)
    assert done.returncode == 1 and calls == [PAGES]
    (error,) = [ln for ln in done.stdout.splitlines() if ln.startswith("::error")]
    assert error.startswith("::error title=GitHub Pages is off::")
    for said in (error, summary):
        assert "Settings → Pages → Source: GitHub Actions" in said
        assert "the data is saved" in said


def test_the_pages_check_is_quiet_when_actions_build_the_site(tmp_path):
    done, calls, summary = _run_with_gh(_step("build", "id", "pages_on")["run"],
                                        {PAGES: [200, {"build_type": "workflow"}]}, tmp_path)
    assert (done.returncode, done.stdout, summary, calls) == (0, "", "", [PAGES])


LIST = "GET repos/owner/repo/actions/workflows"
PUT = "PUT repos/owner/repo/actions/workflows/{}/enable"


def _workflows(**states: str) -> dict[str, list]:
    listed = [{"path": f".github/workflows/{name}.yml", "state": state}
              for name, state in states.items()]
    return {LIST: [200, {"total_count": len(listed), "workflows": listed}],
            **{PUT.format(f"{name}.yml"): [204, None] for name in states}}


@pytest.mark.parametrize(("states", "enabled"), [
    ({"update": "active", "lock": "active"}, ["update.yml", "lock.yml"]),
    ({"update": "active"}, ["update.yml"]),  # the fork deleted lock.yml
    ({"update": "active", "lock": "deleted"}, ["update.yml"]),
    ({"update": "disabled_inactivity", "lock": "disabled_manually"}, ["update.yml"]),
], ids=["both", "lock.yml deleted", "lock.yml deleted after runs", "lock.yml turned off"])
def test_the_keepalive_enables_only_the_workflows_the_repository_has(states, enabled,
                                                                     tmp_path):
    (step,) = load("update.yml")["jobs"]["keepalive"]["steps"]
    done, calls, _ = _run_with_gh(step["run"], _workflows(**states), tmp_path)
    assert done.returncode == 0, done.stderr
    assert calls == [LIST, *(PUT.format(name) for name in enabled)]


def test_the_keepalive_fails_when_github_cannot_list_the_workflows(tmp_path):
    (step,) = load("update.yml")["jobs"]["keepalive"]["steps"]
    done, calls, _ = _run_with_gh(step["run"], {LIST: [500, None]}, tmp_path)
    assert done.returncode != 0 and calls == [LIST]
