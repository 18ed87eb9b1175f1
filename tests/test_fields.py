"""The field table (knowledge/fields.yaml): a new input field is one row there, and the CLI, the
scenario file, the chat and the free-text reader take it; every row agrees with the fact table."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from advisor.cli import parser
from advisor.errors import KnowledgeError
from advisor.inputs.fields import field_table
from advisor.kb.knowledge import FACT_TYPES, load
from advisor.kb.paths import knowledge_dir

ROOT = Path(__file__).resolve().parents[1]
# The fact a rule would name, in a facts file of its own beside facts.yaml.
NEW_FACT = """\
facts:
  seq_limit:
    kind: input
    type: integer
    scenario: workload.seq_limit
    doc:
      en: "Most sequences one replica runs at once (a field this test adds)."
      de: "Höchstens gleichzeitig laufende Sequenzen je Replikat (ein Feld, das dieser Test hinzufügt)."
    question:
      en: "How many sequences may one replica run at once?"
      de: "Wie viele Sequenzen darf ein Replikat gleichzeitig ausführen?"
"""
# The one row of the field table: the field, and (its `fact:` block) the fact the rules may name.
NEW_ROW = """\
  seq_limit:
    path: workload.seq_limit
    type: count
    flag: --seq-limit
    label: {en: "sequence limit", de: "Sequenzgrenze"}
    help: {en: "most sequences one replica runs at once", de: "höchstens gleichzeitig laufende Sequenzen je Replikat"}
    text: {unit: '(?:seqs|sequences|sequenzen)\\b'}
    fact:
      doc:
        en: "Most sequences one replica runs at once (a field this test adds)."
        de: "Höchstens gleichzeitig laufende Sequenzen je Replikat (ein Feld, das dieser Test hinzufügt)."
      question:
        en: "How many sequences may one replica run at once?"
        de: "Wie viele Sequenzen darf ein Replikat gleichzeitig ausführen?"
"""
CHAT = textwrap.dedent("""\
    import sys
    from advisor.chat.dialogue import ChatSession
    from advisor.core.engine import Engine
    session = ChatSession(Engine.load(), sys.argv[1])
    session.opening()
    session.respond("Llama 3.1 8B on one L4")
    for said in sys.argv[2:]:
        reply = session.respond(said)
        print(reply.text)
        print("understood:", reply.understood)
""")


def advisor(env: dict[str, str], *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "advisor", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        input=stdin,
        timeout=120,
    )


@pytest.fixture(scope="module")
def knowledge_with_fact(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("kb") / "knowledge"
    shutil.copytree(knowledge_dir(), root)
    (root / "facts").mkdir()
    (root / "facts" / "serving.yaml").write_text(NEW_FACT, encoding="utf-8")
    return root


def env_for(root: Path) -> dict[str, str]:
    return {**os.environ, "ADVISOR_KNOWLEDGE_DIR": str(root)}


def test_without_its_row_a_fact_is_no_flag(knowledge_with_fact):
    run = advisor(
        env_for(knowledge_with_fact), "recommend", "--model", "llama 3.1 8b", "--gpu", "l4", "--seq-limit", "64"
    )
    assert run.returncode == 2
    assert "unrecognized arguments: --seq-limit" in run.stderr


@pytest.fixture(scope="module")
def knowledge_with_row(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The advisor's knowledge plus one row in fields.yaml, and nothing else."""
    root = tmp_path_factory.mktemp("kb-row") / "knowledge"
    shutil.copytree(knowledge_dir(), root)
    table = root / "fields.yaml"
    table.write_text(table.read_text(encoding="utf-8") + NEW_ROW, encoding="utf-8")
    return root


def test_one_row_is_a_cli_flag(knowledge_with_row):
    env = env_for(knowledge_with_row)
    helped = advisor(env, "recommend", "--help")
    assert "--seq-limit SEQ_LIMIT" in helped.stdout
    assert "most sequences one replica runs at once" in helped.stdout
    run = advisor(env, "recommend", "--model", "llama 3.1 8b", "--gpu", "l4", "--seq-limit", "64", "--format", "json")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["input"]["workload"]["seq_limit"] == 64
    bad = advisor(env, "recommend", "--model", "llama 3.1 8b", "--gpu", "l4", "--seq-limit", "many")
    assert bad.returncode != 0
    assert "workload.seq_limit: expected a whole number, not 'many'" in bad.stderr


def test_one_row_is_a_scenario_field(knowledge_with_row, tmp_path):
    scenario = tmp_path / "serving.yaml"
    scenario.write_text("model: llama 3.1 8b\nhardware: {gpu: l4}\nworkload: {seq_limit: 32}\n", encoding="utf-8")
    run = advisor(env_for(knowledge_with_row), "recommend", str(scenario), "--format", "json")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["input"]["workload"]["seq_limit"] == 32
    misplaced = tmp_path / "misplaced.yaml"
    misplaced.write_text("model: llama 3.1 8b\nhardware: {gpu: l4, seq_limit: 32}\n", encoding="utf-8")
    run = advisor(env_for(knowledge_with_row), "recommend", str(misplaced))
    assert "unknown field 'hardware.seq_limit'" in run.stderr


@pytest.mark.parametrize(
    ("lang", "said", "expected"),
    [
        ("en", "/set seq_limit 48", "Changed sequence limit: — → 48."),
        ("de", "/set Sequenzgrenze 48", "Sequenzgrenze geändert: — → 48."),
        ("en", "/set workload.seq_limit 1k", "Changed sequence limit: — → 1,024."),
    ],
)
def test_one_row_is_a_chat_fact_with_its_labels(knowledge_with_row, lang, said, expected):
    run = subprocess.run(
        [sys.executable, "-c", CHAT, lang, said],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env_for(knowledge_with_row),
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert expected in run.stdout


def test_one_row_is_read_in_free_text(knowledge_with_row):
    run = subprocess.run(
        [sys.executable, "-c", CHAT, "de", "höchstens 16 Sequenzen"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env_for(knowledge_with_row),
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert "understood: {'workload.seq_limit': 16}" in run.stdout


# --- the table agrees with the fact table, the settings and the CLI -------------------------------


def test_every_field_is_an_input_fact_of_the_same_type():
    kb = load()
    for f in field_table().fields:
        spec = kb.facts.get(f.fact)
        assert spec is not None, f"field {f.fact} has no fact in knowledge/facts.yaml"
        assert spec.kind == "input" and spec.scenario == f.path, f.fact
        assert spec.type in FACT_TYPES[f.type], f"{f.fact}: a {f.type} field, a {spec.type} fact"
        if f.type == "enum":
            assert set(spec.choices) <= set(f.choices) and set(f.choices) - set(spec.choices) <= {"unknown"}, f.fact


def test_every_input_fact_with_a_scenario_path_is_a_field():
    paths = {f.path for f in field_table().fields}
    missing = [name for name, spec in load().facts.items() if spec.kind == "input" and spec.scenario not in paths]
    assert not missing


def test_every_field_speaks_both_languages_and_every_enum_lists_its_values():
    for f in field_table().fields:
        for lang in ("en", "de"):
            assert f.label.texts.get(lang) and f.help.texts.get(lang), f"{f.fact} lacks {lang}"
        if f.type == "enum":
            assert f.choices, f.fact


def test_defaults_agree_with_the_settings_where_both_state_one():
    defaults = load().settings["defaults"]
    for f in field_table().fields:
        if f.fact in defaults and f.default is not None:
            assert defaults[f.fact] == f.default, f"{f.fact}: {f.default!r} here, {defaults[f.fact]!r} in settings"


def test_every_flag_is_unique_and_on_the_commands():
    flags = [f.flag for f in field_table().fields if f.flag]
    assert len(flags) == len(set(flags))
    sub = next(a for a in parser()._actions if a.dest == "command")
    recommend = {s for a in sub.choices["recommend"]._actions for s in a.option_strings}
    size = {s for a in sub.choices["size"]._actions for s in a.option_strings}
    assert set(flags) <= recommend
    assert {f.flag for f in field_table().flags(sizing=True)} == size & set(flags)


def test_a_doubled_flag_is_refused_with_its_name(tmp_path):
    table = (knowledge_dir() / "fields.yaml").read_text(encoding="utf-8")
    (tmp_path / "fields.yaml").write_text(table.replace("flag: --prompt", "flag: --context"), encoding="utf-8")
    with pytest.raises(KnowledgeError, match="flag used by more than one field: --context"):
        field_table(tmp_path)


def test_one_row_is_a_fact_the_rules_can_name(knowledge_with_row):
    kb = load(knowledge_with_row)
    spec = kb.facts["seq_limit"]
    assert (spec.kind, spec.type, spec.scenario) == ("input", "integer", "workload.seq_limit")
    assert spec.question is not None and spec.question.get("de").startswith("Wie viele Sequenzen")


def test_a_fact_declared_twice_is_refused(knowledge_with_fact, tmp_path):
    root = tmp_path / "knowledge"
    shutil.copytree(knowledge_with_fact, root)
    table = root / "fields.yaml"
    table.write_text(table.read_text(encoding="utf-8") + NEW_ROW, encoding="utf-8")
    with pytest.raises(KnowledgeError, match="declared in facts and in its field's row"):
        load(root)


def test_an_edited_field_table_is_checked_again_although_the_last_one_was_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A maintainer's session: the table is read (and kept in the cache), then a free-text pattern is
    # broken by an edit; the next start must say so, not answer from the cached table.
    monkeypatch.setenv("ADVISOR_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "knowledge"
    root.mkdir()
    original = (knowledge_dir() / "fields.yaml").read_text(encoding="utf-8")
    (root / "fields.yaml").write_text(original, encoding="utf-8")
    first = field_table(root)
    assert any(p.name.startswith("fields-") for p in (tmp_path / "cache").iterdir())
    assert field_table(root) is first
    users = first.by_fact()["users"]
    assert users.unit_words
    broken = original.replace("unit: '(users?|", "unit: '((users?|", 1)  # an unclosed group
    assert broken != original
    (root / "fields.yaml").write_text(broken, encoding="utf-8")
    from advisor.inputs import fields

    fields._load.cache_clear()  # a new process: nothing kept in memory
    with pytest.raises(KnowledgeError, match="does not compile"):
        field_table(root)
