"""Evidence readers declare what they yield, and a new reader is one file plus one registry line.

Every registered reader names its targets beforehand (`yields`); on the real captures it contributes
to no other, and each target is a fact of the knowledge base or a place in the scenario. A reader
written in a module of its own and added to the registry shows its fact in the audit's JSON with
no other change. The precedence between readers (an earlier, more direct source wins) holds.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from advisor.audit import audit
from advisor.inputs.evidence.reader import FACT, PAIRS, PLACES, is_place
from advisor.inputs.evidence.registry import READERS
from advisor.render import jsonout
from tests.evidence_data import AUDIT_DATA, bundle, verbatim

PLAN = """\
model: Llama 3.3 70B Instruct
precision: fp8
kv_cache_dtype: fp8
engine: vllm
hardware: {gpu: L40S, gpus_per_node: 4}
workload: {concurrent_conversations: 16, context_tokens: 8192}
deployment: {tp: 2, gpus: [0, 2]}
"""

CAPTURES = sorted(AUDIT_DATA.glob("*.txt"))


def known_target(target: str, kb) -> bool:
    """A fact of the fact base, a scenario place the fact base names, or the deployment's own places."""
    if target.startswith(FACT):
        return target[len(FACT) :] in kb.facts
    if target == PAIRS:
        return True
    places = {spec.scenario for spec in kb.facts.values() if spec.scenario}
    return is_place(target) and (target in places or target in PLACES or target.startswith("deployment."))


def test_every_reader_declares_known_targets(engine):
    assert len({r.kind for r in READERS}) == len(READERS)
    for reader in READERS:
        assert isinstance(reader.yields, tuple), reader.kind
        unknown = [t for t in reader.yields if not known_target(t, engine.kb)]
        assert not unknown, f"{reader.kind} declares targets the fact base does not know: {unknown}"


def test_readers_contribute_only_what_they_declare_on_the_real_captures(engine):
    texts = {p.name: p.read_text(encoding="utf-8") for p in CAPTURES}
    texts |= {f"verbatim {p.name}": verbatim(p.name) for p in CAPTURES}  # some outputs are only read without the header
    texts["deployment.yaml"] = PLAN
    seen: dict[str, set[str]] = {r.kind: set() for r in READERS}
    for name, text in texts.items():
        for reader in READERS:
            if not reader.recognise(text):
                continue
            parsed = reader.parse(text, name)
            if not parsed.data:
                continue
            for c in reader.facts(parsed):
                assert c.target in reader.yields, f"{reader.kind} on {name}: {c.target} is not among its yields"
                assert known_target(c.target, engine.kb), f"{reader.kind} on {name}: unknown target {c.target}"
                seen[reader.kind].add(c.target)
    silent = [kind for kind, targets in seen.items() if not targets and kind != "collect-manifest"]
    assert not silent, f"readers that contributed nothing on any capture: {silent}"
    assert seen["nvidia-smi-topo"] >= {
        "hardware.gpus_per_node",
        "hardware.nvlink",
        "topology",
        "fact:nvlink_weak_pairs",
    }
    assert seen["launch"] >= {"model", "deployment.tp", "deployment.gpus", "fact:nccl_p2p_disable"}


MEMORY_SHARE = '''\
"""vLLM's --gpu-memory-utilization: the share of GPU memory the engine may use."""

from __future__ import annotations

import re
from collections.abc import Iterator

from advisor.inputs.evidence import Parsed
from advisor.inputs.evidence.reader import Contribution, Reader, fact

FLAG = re.compile(r"--gpu-memory-utilization[= ]+([0-9.]+)")


def recognise(text: str) -> bool:
    return bool(FLAG.search(text))


def parse(text: str, file: str) -> Parsed:
    out = Parsed("memory-share", file)
    for no, line in enumerate(text.split("\\n"), 1):
        m = FLAG.search(line)
        if m:
            out.data["share"] = float(m.group(1))
            out.at("share", no, line)
            break
    return out


def facts(parsed: Parsed) -> Iterator[Contribution]:
    yield fact("memory_utilization", parsed.data["share"], parsed.evidence["share"])


READER = Reader("memory-share", recognise, parse, facts, yields=("fact:memory_utilization",))
'''


def _module(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_new_reader_is_one_file_and_one_registry_line(engine, tmp_path):
    source = tmp_path / "memory_share.py"
    source.write_text(MEMORY_SHARE, encoding="utf-8")
    registry = (*READERS, _module(source).READER)
    folder = bundle(tmp_path / "b", {"start.sh": verbatim("launch_07_vllm_serve_tp8_pp2_2x8xH20.txt")})

    before = json.loads(jsonout.render(audit(engine, [folder]), engine.kb, engine.rules))
    after = json.loads(jsonout.render(audit(engine, [folder], readers=registry), engine.kb, engine.rules))

    assert "memory_utilization" not in before["facts"]
    assert after["facts"]["memory_utilization"] == 0.92  # the capture: --gpu-memory-utilization 0.92
    assert after["input"][0]["kinds"] == ["launch", "memory-share"]
    assert after["facts"]["deployment"] == before["facts"]["deployment"] == {"tp": 8, "pp": 2}


def _facts(engine, tmp_path, files: dict[str, str]):
    return audit(engine, [bundle(tmp_path / "b", files)]).facts


def test_the_kernel_log_beats_the_kernel_parameters(engine, tmp_path):
    facts = _facts(
        engine,
        tmp_path,
        {
            "cmdline.txt": verbatim("cmdline_04_ryzen_x570_amd_iommu_on_iommu_pt.txt"),
            "dmesg.txt": verbatim("dmesg_03_ryzen_x570_amdvi_default_domain_translated.txt"),
        },
    )
    assert facts["iommu"] == "translated"


@pytest.mark.parametrize(
    ("files", "p2p"),
    [
        ({"p2p.txt": "p2p_02_5xRTX50_patched_driver_all_OK.txt"}, "ok"),
        (
            {
                "p2p.txt": "p2p_02_5xRTX50_patched_driver_all_OK.txt",
                "bw.txt": "nccl_04_p2pBandwidthLatencyTest_6xRTX4090_p2p_enabled_slower_than_disabled.txt",
            },
            "broken",
        ),
        (
            {
                "bw.txt": "nccl_04_p2pBandwidthLatencyTest_6xRTX4090_p2p_enabled_slower_than_disabled.txt",
                "vllm.log": "log_05_vllm_k8s_8xH100_nccl_p2p_ipc_connected_all_rings.txt",
            },
            "broken",
        ),
        ({"vllm.log": "log_05_vllm_k8s_8xH100_nccl_p2p_ipc_connected_all_rings.txt"}, "ok"),
    ],
)
def test_a_measured_transfer_beats_the_drivers_claim_and_a_fault_is_never_outvoted(engine, tmp_path, files, p2p):
    facts = _facts(engine, tmp_path, {name: verbatim(capture) for name, capture in files.items()})
    assert facts["p2p"] == p2p


def test_the_plan_beats_the_launch_and_the_first_launch_is_evaluated(engine, tmp_path):
    plan_and_launch = _facts(
        engine,
        tmp_path / "a",
        {"deployment.yaml": PLAN, "start.sh": verbatim("launch_07_vllm_serve_tp8_pp2_2x8xH20.txt")},
    )
    assert plan_and_launch["model"] == "Llama 3.3 70B Instruct"
    assert plan_and_launch["deployment"]["tp"] == 2  # the plan's
    assert plan_and_launch["deployment"]["pp"] == 2  # the launch's: the plan is silent on it

    two_launches = _facts(
        engine,
        tmp_path / "b",
        {
            "a_compose.yaml": verbatim("launch_02_vllm_docker_compose_command_list_tp2_device_ids.txt"),
            "b_start.sh": verbatim("launch_07_vllm_serve_tp8_pp2_2x8xH20.txt"),
        },
    )
    assert two_launches["deployment"] == {"tp": 2}  # launch_07's pp is not merged into the first launch


def test_a_local_model_path_is_matched_by_its_last_part(engine, tmp_path):
    facts = _facts(
        engine,
        tmp_path,
        {"start.sh": "vllm serve /models/Llama-3.3-70B-Instruct --tensor-parallel-size 2 --served-model-name chat\n"},
    )
    assert facts["model"] == "Llama-3.3-70B-Instruct"
