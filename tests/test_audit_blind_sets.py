"""The blind audit sets (tests/data/audit-blind-1.yaml to -11.yaml), kept as regression tests: a support
engineer pastes what a public thread's reporter pasted, and the audit, from that evidence alone, names what
the thread's resolution named, or stays quiet on a machine the thread found healthy. Cases the audit still
misses carry `not_yet` with what it lacks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.evidence_data import bundle, verbatim

DATA = Path(__file__).resolve().parent / "data"
NAMES = tuple(f"audit-blind-{n}" for n in range(1, 12))
SETS = {name: yaml.safe_load((DATA / f"{name}.yaml").read_text()) for name in NAMES}
CASES = [case for cases in SETS.values() for case in cases]
RANK = {"info": 0, "advice": 1, "warning": 2, "error": 3}


def _audit(cli, tmp_path, case: dict, unread_is_quiet: bool = False) -> list[dict]:
    # the paste as a file of its own, as the blind runs gave it (a folder is a bundle, which must hold GPU evidence)
    paste = bundle(tmp_path / "paste", {"paste.txt": verbatim(case["file"])}) / "paste.txt"
    code, out, err = cli("audit", str(paste), "--format", "json")
    if unread_is_quiet and code == 2 and "not recognised" in err:
        return []  # a paste the audit cannot read: it says so, and raises nothing against the machine
    assert code in (0, 1), err
    return json.loads(out)["findings"]


def _says(finding: dict, words: list[str]) -> bool:
    text = " ".join(str(finding.get(k) or "") for k in ("title", "explanation", "fix")).lower()
    return any(w.lower() in text for w in words)


@pytest.mark.parametrize("case", [c for c in CASES if not c["healthy"] and "not_yet" not in c], ids=lambda c: c["id"])
def test_the_audit_names_what_the_threads_resolution_named(cli, tmp_path, case):
    findings = _audit(cli, tmp_path, case)
    named = [f["rule"] for f in findings if RANK[f["severity"]] >= 1 and _says(f, case["must_mention_any"])]
    assert named, f"{case['url']}: {[(f['severity'], f['rule']) for f in findings]}"


@pytest.mark.parametrize("case", [c for c in CASES if c["healthy"] and "not_yet" not in c], ids=lambda c: c["id"])
def test_a_machine_the_thread_found_healthy_gets_no_warning(cli, tmp_path, case):
    loud = [f["rule"] for f in _audit(cli, tmp_path, case, unread_is_quiet=True) if RANK[f["severity"]] >= 2]
    assert loud == []


@pytest.mark.parametrize("name", sorted(SETS))
def test_each_set_is_what_its_header_says(name):
    cases = SETS[name]
    assert len(cases) == 24 and sum(c["healthy"] for c in cases) == 4
    assert all(verbatim(c["file"]).strip() for c in cases)
    assert len({c["url"] for c in cases}) == 24


def test_no_two_sets_share_a_thread():
    urls = [c["url"] for n in sorted(SETS) for c in SETS[n]]
    assert len(urls) == len(set(urls))
