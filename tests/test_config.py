from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline import config as config_mod
from pipeline import demo
from pipeline.cli import cli
from pipeline.config import ConfigError
from pipeline.text.taxonomy import CS_CATEGORIES

REPO = Path(__file__).resolve().parents[1]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "papertrail.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_cover_all_of_computer_science(tmp_path):
    cfg = config_mod.load(write(tmp_path, ""))
    assert cfg.sources.arxiv.categories == CS_CATEGORIES
    assert len(cfg.sources.arxiv.categories) == 40
    assert cfg.sources.arxiv.delay_seconds == 3.0
    assert cfg.sources.arxiv.api_url == "https://export.arxiv.org/api/query"
    assert cfg.sources.arxiv.feed_url == "https://rss.arxiv.org/rss/"
    assert cfg.site.language == "zh-CN"
    assert cfg.site.timezone == "Asia/Shanghai"
    assert cfg.store_path == tmp_path / "data"
    assert cfg.output_path == tmp_path / "output"
    assert cfg.digest_language == "zh-CN"


@pytest.mark.parametrize("path", [REPO / "papertrail.toml", demo.CONFIG])
def test_the_shipped_and_the_demo_config_load(path):
    # Whatever a fork puts in papertrail.toml: it must load, nothing more is asked of it here.
    assert config_mod.load(path).path == path


def test_values_are_typed(tmp_path):
    cfg = config_mod.load(write(tmp_path, """
[site]
language = "en"
timezone = "Europe/Berlin"
[sources.arxiv]
categories = ["cs.CL", "stat.ML"]
delay_seconds = 5
page_size = 50
"""))
    assert cfg.site.language == "en"
    assert cfg.sources.arxiv.categories == ("cs.CL", "stat.ML")
    assert cfg.sources.arxiv.delay_seconds == 5.0
    assert isinstance(cfg.sources.arxiv.delay_seconds, float)
    assert cfg.digest_language == "en"


BAD = [
    ("[site]\ntitel = 'x'\n", "site.titel", "unknown key", "title"),
    ("[sources.arxiv]\nenabld = true\n", "sources.arxiv.enabld", "unknown key", "enabled"),
    ("[nonsense]\nx = 1\n", "nonsense", "unknown key", "sources"),
    ("[sources.arxiv]\npage_size = 'many'\n", "sources.arxiv.page_size", "'many'", "1 to 2000"),
    ("[sources.arxiv]\npage_size = 5000\n", "sources.arxiv.page_size", "5000", "1 to 2000"),
    ("[sources.arxiv]\nenabled = 'yes'\n", "sources.arxiv.enabled", "'yes'", "true or false"),
    ("[sources.arxiv]\ncategories = ['cs.XX']\n", "sources.arxiv.categories", "cs.XX",
     "arXiv category codes"),
    ("[sources.arxiv]\ncategories = 'cs.AI'\n", "sources.arxiv.categories", "'cs.AI'",
     "expected an array"),
    ("[sources.arxiv]\napi_url = 'ftp://x'\n", "sources.arxiv.api_url", "ftp://x", "http(s)"),
    ("[sources.arxiv]\nfeed_url = 'https://rss.arxiv.org/rss'\n", "sources.arxiv.feed_url",
     "https://rss.arxiv.org/rss", "ending in /"),
    ("[sources.arxiv]\ndelay_seconds = -1\n", "sources.arxiv.delay_seconds", "-1", "≥ 0"),
    ("[sources.arxiv]\nmax_results_per_query = 40000\n", "sources.arxiv.max_results_per_query",
     "40000", "arXiv serves no result past 10,000"),
    ("[site]\ntimezone = 'Mars/Olympus'\n", "site.timezone", "Mars/Olympus", "IANA"),
    ("[site]\nbuild_jobs = -2\n", "site.build_jobs", "-2", "0 (one per CPU) to 64"),
    ("[site]\nlanguage = 'fr'\n", "site.language", "'fr'", "'zh-CN' | 'en'"),
    ("[site]\nlanguages = ['zh-CN', 'fr']\n", "site.languages", "unknown 'fr'",
     "distinct languages of 'zh-CN', 'en', the default first"),
    ("[site]\nlanguages = ['en', 'en']\n", "site.languages", "a language twice", "distinct"),
    ("[site]\nlanguage = 'en'\nlanguages = ['zh-CN', 'en']\n", "site.languages",
     "[site] language = 'en' is not its first", "the default first"),
    ("[site]\nlanguages = 'en'\n", "site.languages", "expected an array", "distinct"),
    ("[site]\nother_language_days = 0\n", "site.other_language_days", "0", "1 to 366 days"),
    ("[digest]\nselection = 'some'\n", "digest.selection", "'some'", "'all' | 'ai' | 'topics'"),
    ("[digest]\nnotes_share = 1.5\n", "digest.notes_share", "1.5", "0 to 1"),
    ("[digest]\nnotes = 'yes'\n", "digest.notes", "'yes'", "true or false"),
    ("[similar]\ncount = 0\n", "similar.count", "0", "1 to 20 papers"),
    ("[similar]\nenabled = 'no'\n", "similar.enabled", "'no'", "true or false"),
    ("[similar]\nembeddings_dimensions = 8\n", "similar.embeddings_dimensions", "8",
     "16 to 4096"),
    ("[similar]\nembeddings_per_run = -1\n", "similar.embeddings_per_run", "-1", "≥ 0"),
    ("[sources.hf]\nenabled = 1\n", "sources.hf.enabled", "1", "true or false"),
    ("[[topics]]\nslug = 'Bad Slug'\n", "topics[0].slug", "Bad Slug", "lowercase"),
    ("[[topics]]\nslug = 'a'\nname = {zh = '甲', en = 'A'}\nkeywords = ['x']\n"
     "[[topics]]\nslug = 'a'\nname = {zh = '乙', en = 'B'}\nkeywords = ['y']\n",
     "topics[1].slug", "'a'", "no other"),
    ("[[topics]]\nname = {zh = 'x', en = 'y'}\n", "topics[0].slug", "", "required"),
    ("[[topics]]\nslug = 'a'\nkeywords = 'agents'\n", "topics[0].keywords", "'agents'",
     "array"),
    ("[[topics]]\nslug = 'a'\ncolour = 1\n", "topics[0].colour", "unknown key", "keywords"),
    ("[site\n", "not valid TOML", "", ""),
]


@pytest.mark.parametrize(("text", "key", "value", "allowed"), BAD)
def test_bad_config_is_one_clear_error(tmp_path, text, key, value, allowed):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        config_mod.load(path)
    message = str(err.value)
    assert str(path) in message
    assert key in message
    assert value in message
    assert allowed in message


@pytest.mark.parametrize(("text", "key", "value", "allowed"), BAD[:6])
def test_bad_config_exits_2_and_writes_nothing(tmp_path, text, key, value, allowed):
    path = write(tmp_path, text)
    result = CliRunner().invoke(cli, ["--config", str(path), "ingest"])
    assert result.exit_code == 2
    assert key in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["papertrail.toml"]


def test_missing_config_file_names_it(tmp_path):
    result = CliRunner().invoke(cli, ["--config", str(tmp_path / "nope.toml"), "status"])
    assert result.exit_code == 2
    assert "nope.toml" in result.output and "not found" in result.output


def test_digest_base_url_and_model_come_from_env_when_set(tmp_path, monkeypatch):
    path = write(tmp_path, '[digest]\nmodel = "from-file"\n')
    monkeypatch.setenv("PAPERTRAIL_DIGEST_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("PAPERTRAIL_DIGEST_MODEL", "")  # an unset Actions variable
    cfg = config_mod.load(path)
    assert cfg.digest.base_url == "http://127.0.0.1:9/v1"
    assert cfg.digest.model == "from-file"
    monkeypatch.setenv("PAPERTRAIL_DIGEST_BASE_URL", "not a url")
    with pytest.raises(ConfigError, match=r"digest\.base_url"):
        config_mod.load(path)


TOPIC = 'slug = "t"\nname = { zh = "主题", en = "Topic" }\n'

# Every key of [sources.hf], [classify] and [[topics]]: (TOML, what the error must say).
WORDS_20000 = ", ".join(['"w"'] * 20_000)  # a pasted vocabulary
WORDS_10001 = ", ".join(['"w"'] * 10_001)
KEY_ERRORS = [
    ("[sources.hf]\nendpoit = 'x'", ["sources.hf.endpoit", "unknown key", "endpoint"]),
    ("[sources.hf]\nendpoint = 'ftp://x'", ["sources.hf.endpoint", "http(s) URL"]),
    ("[sources.hf]\nenabled = 'yes'", ["sources.hf.enabled", "true or false"]),
    ("[sources.hf]\ntimeout_seconds = 0", ["sources.hf.timeout_seconds", "≥ 0.1"]),
    ("[sources.hf]\nmax_retries = 21", ["sources.hf.max_retries", "0 to 20"]),
    ("[sources.hf]\nbackoff_seconds = -1", ["sources.hf.backoff_seconds", "≥ 0"]),
    ("[sources.hf]\nmax_backoff_seconds = -1", ["sources.hf.max_backoff_seconds"]),
    ("[sources.hf]\ndelay_seconds = 'fast'", ["sources.hf.delay_seconds", "expected a number"]),
    ("[sources.hf]\nbackfill_days = 0", ["sources.hf.backfill_days", "1 to 365"]),
    ("[sources.hf]\noverlap_days = 31", ["sources.hf.overlap_days", "0 to 30"]),
    ("[sources.hf]\npage_size = 101", ["sources.hf.page_size", "1 to 100"]),
    ("[sources.hf]\npage_size = 1.5", ["sources.hf.page_size", "whole number"]),
    ("[classify]\nai_categories = ['cs.XX']", ["classify.ai_categories", "cs.XX"]),
    ("[classify]\nai_categories = 'cs.LG'", ["classify.ai_categories", "expected an array"]),
    ("[classify]\nai_phrases = ['LLM', ' ']", ["classify.ai_phrases", "item 1", "no letter"]),
    ("[classify]\nai_phrases = [1]", ["classify.ai_phrases[0]", "expected a string"]),
    ("[classify]\nphrases = ['x']", ["classify.phrases", "unknown key", "ai_phrases"]),
    ("topics = 'x'", ["topics", "[[topics]]"]),
    ("topics = ['x']", ["topics[0]", "a table"]),
    ("[[topics]]\nname = { zh = 'a', en = 'b' }\nkeywords = ['x']",
     ["topics[0].slug", "(missing)", "a slug is required"]),
    ("[[topics]]\nslug = 'LLM Agents'\nkeywords = ['x']",
     ["topics[0].slug", "lowercase letters, digits and dashes"]),
    (f"[[topics]]\n{TOPIC}keywords = ['x']\n[[topics]]\n{TOPIC}keywords = ['y']",
     ["topics[1].slug", "used by no other topic"]),
    ("[[topics]]\nslug = 't'\nkeywords = ['x']",
     ["topics[0].name.zh", "(missing)", "in topic 't'"]),
    ("[[topics]]\nslug = 't'\nname = { zh = 'a', en = '' }\nkeywords = ['x']",
     ["topics[0].name.en", "non-empty", "in topic 't'"]),
    ("[[topics]]\nslug = 't'\nname = 'Topic'\nkeywords = ['x']", ["topics[0].name", "a table"]),
    ("[[topics]]\nslug = 't'\nname = { zh = 'a', en = 'b', fr = 'c' }\nkeywords = ['x']",
     ["topics[0].name.fr", "unknown key"]),
    (f"[[topics]]\n{TOPIC}", ["topics[0]", "would match nothing", "keywords, all, categories"]),
    (f"[[topics]]\n{TOPIC}keywords = ['agent', '']",
     ["topics[0].keywords", "item 1", "no letter or digit", "in topic 't'"]),
    (f"[[topics]]\n{TOPIC}keywords = 'agent'", ["topics[0].keywords", "expected an array"]),
    (f"[[topics]]\n{TOPIC}keyword = ['agent']", ["topics[0].keyword", "unknown key", "keywords"]),
    (f"[[topics]]\n{TOPIC}all = [[]]", ["topics[0].all", "group 0 is empty"]),
    (f"[[topics]]\n{TOPIC}all = [['a', '-']]", ["topics[0].all", "group 0", "item 1"]),
    (f"[[topics]]\n{TOPIC}all = ['a', 'b']", ["topics[0].all[0]", "expected an array"]),
    (f"[[topics]]\n{TOPIC}keywords = ['Agent']\nexclude = ['agent']",
     ["topics[0].exclude", "both a keyword and an exclude"]),
    (f"[[topics]]\n{TOPIC}exclude = ['.']\nkeywords = ['a']", ["topics[0].exclude", "item 0"]),
    (f"[[topics]]\n{TOPIC}categories = ['cs.ZZ']", ["topics[0].categories", "cs.ZZ"]),
    (f"[[topics]]\n{TOPIC}authors = ['  ']", ["topics[0].authors", "item 0"]),
    (f"[[topics]]\n{TOPIC}min_upvotes = -1", ["topics[0].min_upvotes", "≥ 0"]),
    (f"[[topics]]\n{TOPIC}keywords = ['a']\nexamples = ['../x']",
     ["topics[0].examples", "not an arXiv id"]),
    (f"[[topics]]\n{TOPIC}keywords = ['a']\nmin_similarity = 2",
     ["topics[0].min_similarity", "0 (no check) to 1"]),
    (f"[[topics]]\n{TOPIC}authors = ['K. He']\nmatch_initials = 'yes'",
     ["topics[0].match_initials", "true or false"]),
    ("[[follows]]\nname = 'x'", ["follows[0]", "would match nothing", "authors, keywords"]),
    ("[[follows]]\nwatch = ['2606.01234v2']", ["follows[0].watch", "names a version"]),
    ("[[follows]]\nwatch = ['../../etc']", ["follows[0].watch", "not an arXiv id"]),
    ("[[follows]]\ntopics = ['nope']", ["follows[0].topics", "no topic 'nope'", "none"]),
    ("[[follows]]\ncategories = ['cs.ZZ']", ["follows[0].categories", "cs.ZZ"]),
    ("[[follows]]\nkeywords = ['a']\ncolour = 1", ["follows[0].colour", "unknown key"]),
    ("follows = 'me'", ["follows", "an array of tables: [[follows]]"]),
    (f"[[topics]]\n{TOPIC}keywords = [{WORDS_20000}]",
     ["topics[0].keywords", "20,000 phrases; at most 10,000 in one list", "characters)"]),
    (f"[[topics]]\n{TOPIC}all = [[{WORDS_10001}]]",
     ["topics[0].all", "10,001 phrases; at most 10,000 in all groups"]),
    (f"[[follows]]\nkeywords = [{WORDS_10001}]",
     ["follows[0].keywords", "at most 10,000"]),
    ("[site]\nfeed_max_mb = 0", ["site.feed_max_mb", "0.05 to 50 MB"]),
    ("[site]\nfeed_days = 0", ["site.feed_days", "1 to 60 days"]),
    ("[site]\nrecommend_days = 31", ["site.recommend_days", "1 to 30 days"]),
    ("[site]\nsimulated = ['digests']", ["site.simulated", "unknown 'digests'",
                                         "'times', 'revisions', 'licenses'"]),
]


@pytest.mark.parametrize(("text", "needles"), KEY_ERRORS)
def test_a_config_error_names_the_file_the_key_and_what_is_allowed(tmp_path: Path, text: str,
                                                                   needles: list[str]) -> None:
    path = write(tmp_path, text + "\n")
    with pytest.raises(ConfigError) as info:
        config_mod.load(path)
    message = str(info.value)
    assert message.startswith(str(path))
    for needle in needles:
        assert needle in message, message


def test_a_follow_with_every_key_loads(tmp_path: Path) -> None:
    path = write(tmp_path, f"[[topics]]\n{TOPIC}keywords = ['agent']\n[[follows]]\n"
                 "name = 'mine'\nauthors = ['K. He']\nkeywords = ['diffusion']\n"
                 "categories = ['cs.CV']\ntopics = ['t']\nwatch = ['2606.01234', "
                 "'hep-th/9901001']\n")
    (follow,) = config_mod.load(path).follows
    assert follow.topics == ("t",) and follow.watch == ("2606.01234", "hep-th/9901001")


def test_a_topic_with_every_key_loads(tmp_path: Path) -> None:
    path = write(tmp_path, f"[[topics]]\n{TOPIC}keywords = ['agent']\nall = [['a', 'b']]\n"
                 "exclude = ['c']\ncategories = ['cs.AI']\nauthors = ['K. He']\n"
                 "match_initials = true\nmin_upvotes = 5\n")
    topic = config_mod.load(path).topics[0]
    assert topic.all == (("a", "b"),) and topic.authors == ("K. He",)
    assert topic.match_initials and topic.min_upvotes == 5


@pytest.mark.parametrize(("given", "meant"), [("cs.RB", "cs.RO"), ("cs.ro", "cs.RO"),
                                              ("hep-tx", "hep-th"), ("cs.AIX", "cs.AI")])
def test_an_unknown_category_says_which_one_was_meant_and_where_the_codes_are(
        tmp_path: Path, given: str, meant: str) -> None:
    path = write(tmp_path, f'[sources.arxiv]\ncategories = ["cs.CR", "{given}"]\n')
    result = CliRunner().invoke(cli, ["--config", str(path), "status"])
    assert result.exit_code == 2
    assert (f"sources.arxiv.categories = ['cs.CR', '{given}']: unknown arXiv category "
            f"{given} (did you mean {meant}?); the codes: https://arxiv.org/category_taxonomy "
            "(pipeline/text/taxonomy.py)") in result.output
    assert str(path) in result.output


def test_an_unknown_category_nothing_is_near_gets_no_guess(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        config_mod.load(write(tmp_path, '[[topics]]\nslug = "t"\nname = { zh = "甲", en = "A" }'
                                        '\ncategories = ["quantum"]\n'))
    assert "unknown arXiv category quantum; the codes: https://arxiv.org/category_taxonomy" \
        in str(err.value) and "did you mean" not in str(err.value)


PATTERN_KEYWORDS = ('keywords = ["prompt.*injection", "attack|defen[cs]e", "LiDAR?", '
                    '"(un)safe", "SLAM\\\\b", "C++", "C#"]')


def test_keywords_written_as_patterns_are_warned_of_at_load_not_refused(tmp_path: Path) -> None:
    path = write(tmp_path, f'[[topics]]\nslug = "sec"\nname = {{ zh = "安全", en = "Security" }}\n'
                           f'{PATTERN_KEYWORDS}\n[[follows]]\nkeywords = ["^VLA$"]\n')
    result = CliRunner().invoke(cli, ["--config", str(path), "status"])
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines()
                if line.startswith("papertrail: config warning: ")]
    expected = {"topics[0].keywords[0] = 'prompt.*injection'": "'prompt injection'",
                "topics[0].keywords[1] = 'attack|defen[cs]e'": "'attack', 'defence', 'defense'",
                "topics[0].keywords[2] = 'LiDAR?'": "'LiDAR'",
                "topics[0].keywords[3] = '(un)safe'": "'unsafe', 'safe'",
                "topics[0].keywords[4] = 'SLAM\\\\b'": "'SLAM'",
                "follows[0].keywords[0] = '^VLA$'": "'VLA'"}
    assert len(warnings) == len(expected), warnings  # C++ and C# are words: no warning
    for line, (key, meant) in zip(warnings, expected.items(), strict=True):
        assert f"{path}: {key}" in line and f"did you mean {meant}?" in line, line
        assert "looks like a regular expression" in line
    assert "(topic 'sec')" in warnings[0]


def test_the_default_digest_selection_follows_the_forks_field(tmp_path: Path) -> None:
    def selection(text: str) -> str:
        return config_mod.load(write(tmp_path, text)).digest_selection

    assert selection("") == "ai"  # all of cs.*, AI among them
    assert selection('[sources.arxiv]\ncategories = ["cs.CR"]\n') == "all"
    assert selection('[sources.arxiv]\ncategories = ["cs.CR", "cs.RO"]\n') == "ai"
    assert selection('[sources.arxiv]\ncategories = ["cs.CR"]\n[digest]\nselection = "ai"\n') \
        == "ai"  # said outright: kept
    assert selection('[sources.arxiv]\ncategories = ["cs.CR"]\n'
                     '[classify]\nai_categories = ["cs.CR"]\n') == "ai"


def test_a_secret_the_workflow_does_not_pass_is_warned_of_locally_until_its_line_is_added(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    workflow = tmp_path / ".github" / "workflows" / "update.yml"
    workflow.parent.mkdir(parents=True)
    shipped = (REPO / ".github" / "workflows" / "update.yml").read_text(encoding="utf-8")
    workflow.write_text(shipped, encoding="utf-8")
    path = write(tmp_path, '[digest]\napi_key_env = "MY_KEY"\n[[notify]]\nkind = "slack"\n'
                           'url_env = "MY_SLACK"\ntop = 3\n[[notify]]\nkind = "telegram"\n'
                           'chat_id = "@c"\ntop = 3\n')

    def warnings() -> list[str]:
        result = CliRunner().invoke(cli, ["--config", str(path), "status"])
        assert result.exit_code == 0, result.output
        return [line for line in result.stderr.splitlines() if "config warning" in line]

    slack, key = (f"{path}: notify[0].url_env = 'MY_SLACK': {workflow} does not pass "
                  "$MY_SLACK to `papertrail notify`, so in Actions it is unset; add to that "
                  "step's env: the line `MY_SLACK: ${{ secrets.MY_SLACK }}`",
                  f"{path}: digest.api_key_env = 'MY_KEY': {workflow} does not pass $MY_KEY "
                  "to `papertrail run`")
    told = warnings()
    assert len(told) == 2 and slack in told[1] and key in told[0], told
    assert "DEEPSEEK_API_KEY" in told[0] and "SLACK_WEBHOOK_URL" in told[1]
    # The fork adds the line to the notify step's env: (as the warning says): heard.
    added = "\n          MY_SLACK: ${{ secrets.MY_SLACK }}"
    line = "          NOTIFY_WEBHOOK_URL: ${{ secrets.NOTIFY_WEBHOOK_URL }}"
    workflow.write_text(shipped.replace(line, line + added, 1), encoding="utf-8")
    told = warnings()
    assert len(told) == 1 and key in told[0]
    # In the run step instead, it does not reach `papertrail notify`.
    run = "          OLLAMA_API_KEY: ${{ secrets.OLLAMA_API_KEY }}"
    workflow.write_text(shipped.replace(run, run + added, 1), encoding="utf-8")
    assert any(slack in w for w in warnings())


def test_without_the_workflow_file_the_names_upstreams_passes_are_the_measure(
        tmp_path: Path) -> None:
    cfg = config_mod.load(write(tmp_path, '[[notify]]\nkind = "slack"\ntop = 1\n'
                                          '[[notify]]\nkind = "discord"\nurl_env = "HOOK"\n'
                                          'top = 1\n'))
    (told,) = config_mod.lint(cfg)
    assert "notify[1].url_env = 'HOOK': upstream's .github/workflows/update.yml does not " \
           "pass $HOOK" in told


def test_the_workflows_env_is_read_as_yaml_reads_it() -> None:
    import yaml

    steps = yaml.safe_load((REPO / config_mod.WORKFLOW).read_text("utf-8"))["jobs"]["build"][
        "steps"]
    for command in ("run", "notify"):
        (step,) = [s for s in steps if s.get("run", "").startswith(f"papertrail {command}")]
        found = config_mod.workflow_env(REPO / "pipeline", command)
        assert found == (REPO / config_mod.WORKFLOW, frozenset(step["env"]))
    assert config_mod.workflow_env(REPO, "nonesuch") is None


def test_languages_name_the_default_first_and_language_may_be_left_out(tmp_path):
    """[site] languages lists every language of the site, the default first: `language`,
    left out, is taken from there; given, it must be the first."""
    cfg = config_mod.load(write(tmp_path, "[site]\nlanguages = ['en', 'zh-CN']\n"))
    assert (cfg.site.language, cfg.site_languages) == ("en", ("en", "zh-CN"))
    cfg = config_mod.load(write(tmp_path, "[site]\nlanguage = 'zh-CN'\n"
                                          "languages = ['zh-CN', 'en']\n"))
    assert cfg.site_languages == ("zh-CN", "en")
    assert config_mod.load(write(tmp_path, "[site]\nlanguage = 'en'\n")).site_languages == ("en",)


def test_bad_languages_stop_the_build_with_exit_2(tmp_path):
    path = write(tmp_path, "[site]\nlanguages = ['zh-CN', 'fr']\n")
    result = CliRunner().invoke(cli, ["--config", str(path), "build"])
    assert result.exit_code == 2
    assert "site.languages" in result.output and "'zh-CN', 'en'" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["papertrail.toml"]
