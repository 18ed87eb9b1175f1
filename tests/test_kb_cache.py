"""The load cache answers exactly as a fresh load, follows every edit of the data, and never stands in
the way: a corrupt file is read around and rewritten, a folder that cannot be written still answers,
and `advisor rules check` always reads the files themselves."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from advisor import diskcache
from advisor.core.engine import Engine
from advisor.kb import cache
from advisor.kb.paths import knowledge_dir, rules_dir
from tests.scenarios import README_FIRST


@pytest.fixture()
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("ADVISOR_CACHE_DIR", str(folder))
    return folder


def _records(folder: Path) -> list[Path]:
    return sorted(folder.glob("records-*.pickle"))


def _answer(cli, *extra: str) -> dict:
    code, out, err = cli(*README_FIRST, "--format", "json", *extra)
    assert code == 0, err
    return json.loads(out)


def test_a_cache_hit_answers_exactly_as_a_fresh_load(cli, cache_dir):
    fresh = _answer(cli)
    assert len(_records(cache_dir)) == 1
    assert Engine.load().from_cache
    assert _answer(cli) == fresh
    code, text_hit, _ = cli(*README_FIRST)
    assert Engine.load(cached=False).from_cache is False
    shutil.rmtree(cache_dir)
    code, text_fresh, _ = cli(*README_FIRST)
    assert text_hit == text_fresh
    assert "RTX PRO 6000" in text_fresh


def test_editing_a_knowledge_file_invalidates_the_cache(cli, cache_dir, tmp_path, monkeypatch):
    kb = tmp_path / "knowledge"
    shutil.copytree(knowledge_dir(), kb)
    monkeypatch.setenv("ADVISOR_KNOWLEDGE_DIR", str(kb))
    before = _answer(cli)
    assert Engine.load().from_cache
    gpus = kb / "gpus.yaml"
    text = gpus.read_text(encoding="utf-8")
    assert "memory_gib_reported: 95.6" in text
    gpus.write_text(text.replace("memory_gib_reported: 95.6", "memory_gib_reported: 47.8", 1), encoding="utf-8")
    assert not Engine.load().from_cache
    after = _answer(cli)
    assert after["figures"]["usable_gib_per_gpu"] != before["figures"]["usable_gib_per_gpu"]
    assert Engine.load().from_cache
    assert len(_records(cache_dir)) == 1  # rewritten in place, not one file per edit


def test_a_renamed_rule_file_invalidates_the_cache(cache_dir, tmp_path):
    rules = tmp_path / "rules"
    shutil.copytree(rules_dir(), rules)
    Engine.load(knowledge_dir(), rules)
    assert Engine.load(knowledge_dir(), rules).from_cache
    name = sorted(p for p in rules.glob("*.yaml") if p.name != "selection.yaml")[0]
    renamed = rules / f"z-{name.name}"
    name.rename(renamed)
    engine = Engine.load(knowledge_dir(), rules)
    assert not engine.from_cache
    moved = [r.id for r in engine.rules.rules.values() if r.where.startswith(f"{renamed}:")]
    assert moved and list(engine.rules.rules)[-len(moved) :] == moved  # rules keep the order of their files


@pytest.mark.parametrize("garbage", [b"", b"not a pickle at all", b"\x80\x05K\x01.", b"\x80\x05\x95\xff\xff\xff\xff"])
def test_a_corrupt_cache_file_is_ignored_and_rewritten(cli, cache_dir, garbage):
    fresh = _answer(cli)
    (path,) = _records(cache_dir)
    path.write_bytes(garbage)
    assert not Engine.load().from_cache
    assert _answer(cli) == fresh
    assert path.read_bytes() != garbage
    assert Engine.load().from_cache


def test_an_unwritable_cache_folder_still_answers(cli, tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("ADVISOR_CACHE_DIR", str(blocker / "cache"))
    first = _answer(cli)
    assert _answer(cli) == first
    assert not Engine.load().from_cache


def test_a_missing_or_unusable_home_answers_without_a_cache(cli, tmp_path, monkeypatch):
    monkeypatch.delenv("ADVISOR_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    home = tmp_path / "home-is-a-file"
    home.write_text("", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    assert diskcache.cache_dir() == home / ".cache" / "gpu-split-advisor"
    assert _answer(cli)["layout_label"]
    assert not Engine.load().from_cache
    monkeypatch.setenv("HOME", "")
    monkeypatch.setattr(diskcache.os.path, "expanduser", lambda p: p)
    assert diskcache.cache_dir() is None
    assert _answer(cli)["layout_label"]


def test_xdg_cache_home_and_the_override(tmp_path, monkeypatch):
    monkeypatch.delenv("ADVISOR_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert diskcache.cache_dir() == tmp_path / "xdg" / "gpu-split-advisor"
    monkeypatch.setenv("ADVISOR_CACHE_DIR", str(tmp_path / "mine"))
    assert diskcache.cache_dir() == tmp_path / "mine"


def test_a_cache_file_others_can_write_is_not_trusted(cache_dir):
    Engine.load()
    (path,) = _records(cache_dir)
    path.chmod(0o666)
    assert not Engine.load().from_cache
    assert Engine.load().from_cache  # rewritten with the user's own permissions
    assert path.stat().st_mode & 0o077 == 0


def test_rules_check_reads_the_files_even_when_the_cache_says_otherwise(cli, cache_dir):
    engine = Engine.load()
    (path,) = _records(cache_dir)
    key = cache.data_key(knowledge_dir(), rules_dir())
    source = next(iter(engine.kb.sources))
    del engine.kb.sources[source]  # a cache whose records differ from the files it was keyed by
    cache._write(path, key, (engine.kb, engine.rules, cache.hashes_of(engine.kb, engine.rules)))
    tampered = Engine.load()
    assert tampered.from_cache and source not in tampered.kb.sources
    code, out, err = cli("rules", "check", "--quick")
    assert code == 0, err
    assert out.startswith("rules check: ok")


def test_a_warm_start_reads_no_yaml(cache_dir):
    """The field table and the report labels come from the cache too: a second run imports no PyYAML."""
    code = (
        "import sys; from advisor.cli import main; main(['recommend', '--model', 'llama 3.3 70b', '--gpu', "
        "'rtx pro 6000', '--gpus', '2']); print('yaml' in sys.modules, file=sys.stderr)"
    )
    env = {**os.environ, "ADVISOR_CACHE_DIR": str(cache_dir)}
    runs = [
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
        for _ in range(2)
    ]
    assert [r.stderr.strip().splitlines()[-1] for r in runs] == ["True", "False"]
    assert runs[0].stdout == runs[1].stdout


def test_an_edited_yaml_file_is_read_again(cache_dir, tmp_path):
    from advisor.yamlio import load_file_cached

    table = tmp_path / "labels.yaml"
    table.write_text("labels: {a: {en: one, de: eins}}\n", encoding="utf-8")
    assert load_file_cached(table)["labels"]["a"]["en"] == "one"
    table.write_text("labels: {a: {en: two, de: zwei}}\n", encoding="utf-8")
    assert load_file_cached(table)["labels"]["a"]["en"] == "two"
    assert load_file_cached(table).line == 1  # line numbers survive the cache, for located errors


def test_many_copies_of_the_data_leave_a_bounded_cache_folder(cache_dir, tmp_path):
    """Each copy of the data (an upgrade, a clone, a temporary copy) has its own entry; the folder keeps
    only the newest few, and the copy in use is among them."""
    copies = []
    for i in range(diskcache.KEEP + 3):
        rules = tmp_path / f"rules-{i}"
        shutil.copytree(rules_dir(), rules)
        copies.append(rules)
        Engine.load(knowledge_dir(), rules)
    assert len(_records(cache_dir)) == diskcache.KEEP
    assert Engine.load(knowledge_dir(), copies[-1]).from_cache
    assert not Engine.load(knowledge_dir(), copies[0]).from_cache  # the oldest was removed, and is rebuilt


def test_the_hashes_an_answer_names_are_the_files_own_from_the_cache_too(cache_dir):
    """The JSON answer and the transcripts name the rule and knowledge base by hash: a start from the
    cache names the same hashes as a fresh load of the files, and the generated formula code is used
    alike."""
    Engine.load()
    warm, fresh = Engine.load(), Engine.load(cached=False)
    assert warm.from_cache and not fresh.from_cache
    assert (warm.rule_base_hash, warm.knowledge_hash) == (fresh.rule_base_hash, fresh.knowledge_hash)
    assert len(warm.rule_base_hash) == 16 and warm.rule_base_hash != warm.knowledge_hash
    assert all(f.fast is not None for f in warm.calc.formulas.values())


def test_an_edit_that_keeps_a_files_length_is_seen(cache_dir, tmp_path):
    """The key checks each file's contents, not its size or time: one digit changed in a rule file
    makes a fresh load, and the rule-base hash the answers name changes with it."""
    rules = tmp_path / "rules"
    shutil.copytree(rules_dir(), rules)
    first = Engine.load(knowledge_dir(), rules)
    assert Engine.load(knowledge_dir(), rules).from_cache
    path = rules / "audit.yaml"
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# What only a host can show")
    edited = text.replace("# What only", "# What Only", 1)  # a comment: the rules stay the same
    path.write_text(edited, encoding="utf-8")
    again = Engine.load(knowledge_dir(), rules)
    assert not again.from_cache
    assert again.rule_base_hash != first.rule_base_hash


def test_the_key_covers_every_loader_even_one_a_cached_start_never_imports():
    """The entries keep code written by advisor.kb.pyexpr, which a start from the cache never imports:
    the key still checks its source (and every other loader's), so an edit to it makes a fresh load."""
    key = cache.data_key(knowledge_dir(), rules_dir())
    for name in cache._LOADER_MODULES:
        line = next(part for part in key.splitlines() if part.startswith(f"{name} "))
        assert not line.endswith(" 0:0000000000000001"), name  # the checksum of no bytes at all
    assert "advisor.kb.pyexpr" in cache._LOADER_MODULES
