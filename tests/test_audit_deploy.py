"""`advisor audit` says what it would deploy instead (issue #14 item 6): the advisor's recommendation for
the machine the evidence shows, on the host's real GPU ids from `nvidia-smi topo -m`, against the deployed
layout on the GPUs its launch gives it, with both layouts' estimates; or that the deployment is the
recommendation, with the GPU ids of each group. Bundles are real captures (tests/data/audit) plus the
customer's deployment.yaml or launch line."""

from __future__ import annotations

import json

import pytest

from advisor.audit import audit, audit_fleet
from advisor.core.engine import Engine
from tests.evidence_data import L40S_PLAN, bundle, verbatim

RTX3090_PAIRS = "topo_11_4xRTX3090_nv4_bridged_pairs_0-2_1-3.txt"  # NVLink bridges on GPU0-GPU2 and GPU1-GPU3
L40S_SOCKETS = "topo_04_4xL40S_2socket_node_sys_nic_spaces.txt"  # GPU0,1 on one socket, GPU2,3 on the other
HGX_H100 = "topo_12_8xH100_hgx_nv18_10nic_rail_truncated.txt"


def qwen_on_3090s(deployment: str) -> str:
    return (
        "model: Qwen3-32B\nprecision: fp8\nhardware: {gpu: RTX 3090}\n"
        f"workload: {{concurrent_conversations: 10}}\ndeployment: {deployment}\n"
    )


def host(tmp_path, topo: str, plan: str, name: str = "b"):
    return bundle(tmp_path / name, {"topo.txt": verbatim(topo), "deployment.yaml": plan})


def as_json(cli, folder, *args: str) -> dict:
    code, out, _ = cli("audit", str(folder), "--format", "json", *args)
    assert code in (0, 1)
    return json.loads(out)


def shown(value: float) -> str:
    """A figure as the text prints it (three significant digits, thousands separators)."""
    rounded = float(f"{value:.3g}")
    text = f"{rounded:,.0f}" if rounded >= 100 else f"{rounded:.3g}" if rounded < 10 else f"{rounded:.1f}"
    return text.removesuffix(".0")  # 26.0 prints as 26


def test_tp4_across_two_nvlink_pairs_would_run_two_copies_on_the_bridged_pairs(cli, tmp_path):
    """'We run Qwen3-32B with TP 4 on our four 3090s with two NVLink bridges: is that right?'"""
    folder = host(tmp_path, RTX3090_PAIRS, qwen_on_3090s("{tp: 4}"))
    code, out, _ = cli("audit", str(folder))
    assert "[advice] Would deploy 2 × TP 2 on GPUs 0,2 | 1,3 instead of TP 4 (audit-deploy-instead)" in out
    assert "deployed is TP 4 on GPUs 0-3" in out and "tp-within-nvlink-domain" in out
    doc = as_json(cli, folder)
    deploy = doc["deploy"]
    assert deploy["differs"] is True and deploy["against_deployed"] == ["tp-within-nvlink-domain"]
    assert deploy["recommended"]["label"] == "2 × TP 2" and deploy["recommended"]["tp_path"] == "NV4"
    assert deploy["recommended"]["groups"] == [[[{"node": 0, "gpus": [0, 2]}]], [[{"node": 0, "gpus": [1, 3]}]]]
    assert deploy["deployed"]["gpus"] == "0-3" and deploy["deployed"]["tp_path"] == "NODE"
    new, old = deploy["recommended"]["figures"], deploy["deployed"]["figures"]
    # the rule against TP 4 over host bridges decides (against_deployed above); by the estimate alone TP 4
    # shares each prompt's FLOPs over four cards, so its first token comes sooner than a TP 2 copy's
    assert new["ttft_ms"] > old["ttft_ms"]
    flat = " ".join(out.split())
    for name, unit in (("one_user_tokens_per_s", "tokens/s"), ("throughput_tokens_per_s", "tokens/s")):
        assert f"{shown(new[name])} {unit} against {shown(old[name])}" in flat
    found = {f["rule"]: f for f in doc["findings"]}
    assert found["audit-deploy-instead"]["severity"] == "advice"
    assert doc["facts"]["deploy_groups"] == "0,2 | 1,3"
    code_de, out_de, _ = cli("audit", str(folder), "--lang", "de")
    assert "Würde 2 × TP 2 auf den GPUs 0,2 | 1,3 statt TP 4 einsetzen" in out_de
    assert code_de == code


def test_tp2_on_the_phb_pair_moves_to_an_nvlink_pair_and_is_priced_on_pcie(cli, tmp_path):
    """TP 2 on GPU0 and GPU1, which meet at a host bridge, next to an NVLink bridge to GPU2."""
    folder = host(tmp_path, RTX3090_PAIRS, qwen_on_3090s("{tp: 2, gpus: [0, 1]}"))
    deploy = as_json(cli, folder)["deploy"]
    assert deploy["deployed"]["tp_path"] == "PHB" and deploy["recommended"]["tp_path"] == "NV4"
    assert deploy["recommended"]["gpus"] == "0,2 | 1,3"
    new, old = deploy["recommended"]["figures"], deploy["deployed"]["figures"]
    # the deployed group's all-reduce runs over PCIe, as topo -m shows, not over the bridge it lacks
    assert old["one_user_tokens_per_s"] < new["one_user_tokens_per_s"] and old["ttft_ms"] > new["ttft_ms"]
    _, out, _ = cli("audit", str(folder))
    assert "audit-tp-group-on-slow-path" in out  # the existing finding stays beside the new one
    assert "Would deploy 2 × TP 2 on GPUs 0,2 | 1,3 instead of TP 2" in out


def test_tp2_across_two_sockets_gets_the_layout_the_advisor_would_run(cli, tmp_path):
    """The L40S bundle of the audit tests: TP 2 on GPU0 and GPU2, a SYS path across the sockets."""
    folder = host(tmp_path, L40S_SOCKETS, L40S_PLAN)
    deploy = as_json(cli, folder)["deploy"]
    assert deploy["deployed"] | {"figures": None} == {
        "layout": {"replicas": 1, "tp": 2, "pp": 1, "ep": 1, "gpus_per_replica": 2},
        "label": "TP 2",
        "gpus": "0,2",
        "groups": [[[{"node": 0, "gpus": [0, 2]}]]],
        "tp_path": "SYS",
        "figures": None,
    }
    assert deploy["differs"] is True and deploy["recommended"]["label"] == "TP 4"
    assert deploy["recommended"]["gpus"] == "0-3"
    old, new = deploy["deployed"]["figures"], deploy["recommended"]["figures"]
    assert new["throughput_tokens_per_s"] > old["throughput_tokens_per_s"]
    _, md, _ = cli("audit", str(folder), "--format", "md")
    assert "Would deploy TP 4 on GPUs 0-3 instead of TP 2" in md
    _, sarif, _ = cli("audit", str(folder), "--format", "sarif", "--fail-on", "never")
    results = json.loads(sarif)["runs"][0]["results"]
    hit = next(r for r in results if r["ruleId"] == "audit-deploy-instead")
    assert hit["level"] == "note" and "0-3" in hit["message"]["text"]


@pytest.mark.parametrize(
    ("topo", "plan", "title"),
    [
        (
            RTX3090_PAIRS,
            qwen_on_3090s("{tp: 2, dp: 2, gpus: [0, 2, 1, 3]}"),
            "The deployed 2 × TP 2 on GPUs 0,2 | 1,3 is what the advisor recommends for this host",
        ),
        (
            HGX_H100,
            "model: Llama 3.1 405B\nprecision: fp8\nhardware: {gpu: H100 SXM}\n"
            "workload: {concurrent_conversations: 32}\ndeployment: {tp: 8}\n",
            "The deployed TP 8 on GPUs 0-7 is what the advisor recommends for this host",
        ),
    ],
)
def test_a_deployment_that_is_the_recommendation_is_confirmed_with_its_gpus(cli, tmp_path, topo, plan, title):
    folder = host(tmp_path, topo, plan)
    code, out, _ = cli("audit", str(folder))
    assert f"[info] {title} (audit-deployed-layout-recommended)" in out
    assert "audit-deploy-instead" not in out
    deploy = as_json(cli, folder)["deploy"]
    assert deploy["differs"] is False and deploy["recommended"] == deploy["deployed"]
    assert deploy["against_deployed"] == []
    _, out_de, _ = cli("audit", str(folder), "--lang", "de")
    assert "ist, was der Advisor für diesen Host empfiehlt" in out_de


def test_launch_line_over_two_nodes_names_each_nodes_gpus(cli, tmp_path):
    """The posted `vllm serve ... --tensor-parallel-size 8 --pipeline-parallel-size 2` of a 16-GPU pair of
    nodes, with the customer's plan naming the GPUs and the network."""
    folder = bundle(
        tmp_path / "b",
        {
            "launch.sh": verbatim("launch_07_vllm_serve_tp8_pp2_2x8xH20.txt"),
            "deployment.yaml": "hardware: {gpu: H200 SXM, gpus_per_node: 8, nodes: 2, node_link_gbps: 400}\n"
            "workload: {concurrent_conversations: 64}\n",
        },
    )
    doc = as_json(cli, folder)
    deployed = doc["deploy"]["deployed"]
    assert deployed["label"] == "TP 8 × PP 2" and deployed["gpus"] == "n0:0-7 → n1:0-7"
    assert deployed["groups"] == [[[{"node": 0, "gpus": list(range(8))}], [{"node": 1, "gpus": list(range(8))}]]]
    _, out, _ = cli("audit", str(folder))
    assert "TP 8 × PP 2 on GPUs n0:0-7 → n1:0-7" in " ".join(out.split())


def test_without_a_known_model_nothing_is_recommended(cli, tmp_path, monkeypatch):
    """A host alone (topo -m, no model): the host checks run, and no recommendation is evaluated."""
    import advisor.audit.diagnose as audit_module

    def refuse(*args, **kwargs):
        raise AssertionError("evaluated a recommendation without a model")

    monkeypatch.setattr(audit_module, "recommend_for_host", refuse)
    folder = bundle(tmp_path / "b", {"topo.txt": verbatim(L40S_SOCKETS)})
    doc = as_json(cli, folder)
    assert doc["deploy"] is None
    assert not {"audit-deploy-instead", "audit-deployed-layout-recommended"} & {f["rule"] for f in doc["findings"]}


def test_a_fleet_of_identical_hosts_evaluates_the_recommendation_once(tmp_path, monkeypatch):
    engine = Engine.load()
    folders = [host(tmp_path, RTX3090_PAIRS, qwen_on_3090s("{tp: 4}"), name=f"host-{i}") for i in range(3)]
    searches = []
    evaluate = Engine.evaluate

    def counted(self, s, *args, **kwargs):
        if kwargs.get("only") is None:
            searches.append(s)
        return evaluate(self, s, *args, **kwargs)

    monkeypatch.setattr(Engine, "evaluate", counted)
    items = audit_fleet(engine, folders)
    assert [i.result.deploy.recommended.groups.text() for i in items if i.result and i.result.deploy] == [
        "0,2 | 1,3"
    ] * 3
    assert len(searches) == 1
    one = audit(engine, [folders[0]])
    assert one.deploy is not None and one.deploy.differs and len(searches) == 1


def test_pipeline_on_an_nvlink_mesh_for_one_user_would_be_tensor_parallel(cli, tmp_path):
    """'One user, latency matters, PP 4 on our four H100 with NVLink between all of them: right?'"""
    plan = (
        "model: Llama 3.3 70B Instruct\nprecision: fp8\nhardware: {gpu: H100 SXM}\n"
        "workload: {concurrent_conversations: 1, goal: latency}\ndeployment: {pp: 4}\n"
    )
    folder = host(tmp_path, "topo_05_4xH100_nv6_mesh_nic_per_gpu_strided_affinity.txt", plan)
    _, out, _ = cli("audit", str(folder))
    flat = " ".join(out.split())
    assert "Would deploy TP 4 on GPUs 0-3 instead of PP 4" in flat
    assert "deployed is PP 4 on GPUs 0 → 1 → 2 → 3" in flat
    deploy = as_json(cli, folder)["deploy"]
    assert deploy["deployed"]["groups"] == [[[{"node": 0, "gpus": [g]}] for g in range(4)]]
    assert deploy["recommended"]["tp_path"] == "NV6" and deploy["deployed"]["tp_path"] is None
    new, old = deploy["recommended"]["figures"], deploy["deployed"]["figures"]
    assert new["one_user_tokens_per_s"] > 2 * old["one_user_tokens_per_s"]
    assert (
        f"one user {shown(new['one_user_tokens_per_s'])} tokens/s against {shown(old['one_user_tokens_per_s'])}" in flat
    )


def test_same_layout_on_worse_pairs_is_moved_and_a_recorded_audit_replays_unchanged(cli, tmp_path):
    """Two copies of TP 2 on GPU0,1 and GPU2,3 (host bridges) where the NVLink bridges join 0-2 and 1-3."""
    folder = host(tmp_path, RTX3090_PAIRS, qwen_on_3090s("{tp: 2, dp: 2, gpus: [0, 1, 2, 3]}"))
    code, out, err = cli("audit", str(folder), "--record", "--transcripts", str(tmp_path / "t"))
    assert "transcript recorded" in err
    assert "Would deploy 2 × TP 2 on GPUs 0,2 | 1,3 instead of 2 × TP 2" in out
    assert "deployed is 2 × TP 2 on GPUs 0,1 | 2,3" in " ".join(out.split())
    recorded = json.loads(next((tmp_path / "t").glob("*.json")).read_text())
    assert recorded["result"]["replay"]["deployment"]["topology"]["paths"]["0-2"] == "NV4"
    code, out, _ = cli("replay", str(next((tmp_path / "t").glob("*.json"))))
    assert code == 0 and out.startswith("no change")


def _ticket_md(cli, tmp_path, folder, *args: str) -> tuple[str, dict]:
    """The Markdown transcript and its ticket block of `advisor audit --record`."""
    out_dir = tmp_path / ("t" + "".join(args))
    code, _, err = cli("audit", str(folder), "--record", "--transcripts", str(out_dir), *args)
    assert "transcript recorded" in err
    doc = json.loads(next(out_dir.glob("*.json")).read_text())
    return next(out_dir.glob("*.md")).read_text(), doc["result"]["ticket"]


def test_the_ticket_names_what_the_advisor_would_deploy_instead_in_english_and_german(cli, tmp_path):
    """The engineer who gets the customer's audit transcript sees, at the top, the layout to deploy instead,
    on which GPU ids, and what it changes, as the audit's deploy record says it."""
    folder = host(tmp_path, RTX3090_PAIRS, qwen_on_3090s("{tp: 4}"))
    record = as_json(cli, folder)["deploy"]
    new, old = record["recommended"]["figures"], record["deployed"]["figures"]
    md, ticket = _ticket_md(cli, tmp_path, folder)
    assert ticket["deploy"]["layout"] == record["recommended"]["label"] == "2 × TP 2"
    assert ticket["deploy"]["gpus"] == record["recommended"]["gpus"] == "0,2 | 1,3"
    assert "- **Would deploy instead:** 2 × TP 2 on GPUs 0,2 | 1,3 (instead of TP 4 on GPUs 0-3)" in md
    change = (new["ttft_ms"] - old["ttft_ms"]) / old["ttft_ms"] * 100
    assert (
        f"  - Time to first token: {shown(new['ttft_ms'])} ms against {shown(old['ttft_ms'])} ms ({change:+.0f} %)"
        in md
    )
    assert f"{shown(new['one_user_tokens_per_s'])} tokens/s against {shown(old['one_user_tokens_per_s'])}" in md
    assert "rules against the deployed layout: `tp-within-nvlink-domain`" in md
    md_de, _ = _ticket_md(cli, tmp_path, folder, "--lang", "de")
    assert "- **Würde stattdessen einsetzen:** 2 × TP 2 auf den GPUs 0,2 | 1,3 (statt TP 4 auf den GPUs 0-3)" in md_de
    assert "Zeit bis zum ersten Token:" in md_de and " ms gegenüber " in md_de and "Token/s gegenüber" in md_de


def test_the_ticket_confirms_a_deployment_that_is_the_recommendation(cli, tmp_path):
    folder = host(tmp_path, RTX3090_PAIRS, qwen_on_3090s("{tp: 2, dp: 2, gpus: [0, 2, 1, 3]}"))
    md, ticket = _ticket_md(cli, tmp_path, folder)
    assert ticket["deploy"]["differs"] is False
    assert "- **Would deploy the same:** 2 × TP 2 on GPUs 0,2 | 1,3" in md and "Would deploy instead" not in md
    assert " against " not in "\n".join(line for line in md.splitlines() if line.startswith("  - "))
    md_de, _ = _ticket_md(cli, tmp_path, folder, "--lang", "de")
    assert "- **Würde dasselbe einsetzen:** 2 × TP 2 auf den GPUs 0,2 | 1,3" in md_de
