"""A normal, non-editable install carries the rule base and the knowledge base with it."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        pytest.fail(f"building the wheel failed:\n{done.stderr[-2000:]}")
    return next(out.glob("*.whl"))


def test_wheel_contains_rules_and_knowledge(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "advisor/_data/rules/p2p.yaml" in names
    assert "advisor/_data/knowledge/gpus.yaml" in names
    assert "advisor/_data/knowledge/sources/literature.yaml" in names
    assert "advisor/labels.yaml" in names
    assert "advisor/chat/strings.yaml" in names
    assert {
        f"advisor/schemas/{n}.schema.json"
        for n in ("common", "recommendation", "audit", "audit-fleet", "sizing", "collect", "transcript")
    } <= set(names)


def test_installed_package_answers_from_another_folder(wheel, tmp_path):
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    env = {**os.environ, "PYTHONPATH": str(site)}
    env.pop("ADVISOR_RULES_DIR", None)
    env.pop("ADVISOR_KNOWLEDGE_DIR", None)
    run = subprocess.run(
        [sys.executable, "-m", "advisor", "recommend", "--model", "llama 3.1 8b", "--gpu", "l4", "--format", "json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert '"schema": "advisor.recommendation/1"' in run.stdout
    where = subprocess.run(
        [sys.executable, "-c", "import advisor.kb.paths as p; print(p.rules_dir())"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
    )
    assert str(site) in where.stdout
    shipped = subprocess.run(
        [sys.executable, "-c", "from advisor.render import schemas; print(schemas.load('advisor.audit/1')['title'])"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
    )
    assert shipped.stdout.strip() == "advisor.audit/1", shipped.stderr
