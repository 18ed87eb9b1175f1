"""A support engineer pastes what the RDMA adapters list (show_gids, ibv_devinfo -v, ibstat) and the audit
says which RoCE GID NCCL uses, whether a forced NCCL_IB_GID_INDEX fits it, and which ports carry nothing;
and a PCIe-only topology pasted alone asks for the peer-to-peer evidence it cannot show."""

from __future__ import annotations

import json

from tests.evidence_data import bundle, verbatim


def audit(cli, tmp_path, files: dict[str, str]) -> dict[str, dict]:
    _code, out, _err = cli("audit", str(bundle(tmp_path / "case", files)), "--format", "json")
    return {f["rule"]: f for f in json.loads(out)["findings"]}


def test_show_gids_in_a_pod_names_the_roce_v2_ipv4_index_and_the_sparse_table(cli, tmp_path):
    found = audit(cli, tmp_path, {"show_gids.txt": verbatim("blind3_nccl_1538.txt")})["audit-roce-gid-index-to-use"]
    assert found["severity"] == "advice"
    assert "index 7 (RoCE v2, IPv4)" in found["title"]
    assert "its lowest index is 4" in found["explanation"] and "NCCL_IB_GID_INDEX=7" in found["fix"]
    assert "10.156.129.132" in found["evidence"][0]["text"] and "v2" in found["evidence"][0]["text"]


def test_ibv_devinfo_picks_the_ipv4_mapped_gid_not_the_link_local_one(cli, tmp_path):
    found = audit(cli, tmp_path, {"devinfo.txt": verbatim("blind2_c02_nccl769_roce_gid.txt")})
    assert "index 3 (RoCE v2, IPv4)" in found["audit-roce-gid-index-to-use"]["title"]
    assert "::ffff:200.0.209.6" in found["audit-roce-gid-index-to-use"]["evidence"][0]["text"]


def test_a_forced_link_local_gid_index_is_a_warning_with_the_index_to_use(cli, tmp_path):
    files = {"devinfo.txt": verbatim("blind2_c02_nccl769_roce_gid.txt"), "nccl.env": "NCCL_IB_GID_INDEX=1\n"}
    found = audit(cli, tmp_path, files)
    wrong = found["audit-roce-gid-index-forced-wrong"]
    assert wrong["severity"] == "warning" and "NCCL_IB_GID_INDEX=1 is not" in wrong["title"]
    assert "NCCL_IB_GID_INDEX=3" in wrong["fix"]
    assert "audit-roce-gid-index-to-use" not in found


def test_the_index_the_job_already_forces_correctly_raises_nothing(cli, tmp_path):
    files = {"devinfo.txt": verbatim("blind2_c02_nccl769_roce_gid.txt"), "nccl.env": "NCCL_IB_GID_INDEX=3\n"}
    found = audit(cli, tmp_path, files)
    assert not {"audit-roce-gid-index-forced-wrong", "audit-roce-gid-index-to-use"} & set(found)


def test_a_pcie_only_topology_alone_asks_for_acs_iommu_and_a_p2p_test(cli, tmp_path):
    found = audit(cli, tmp_path, {"topo.txt": verbatim("blind3_nccl_2079.txt")})["audit-pcie-p2p-unverified"]
    assert found["severity"] == "advice" and "GPU0-GPU1" in found["title"] and "NODE" in found["title"]
    assert "ACSCtl" in found["fix"] or "acsctl" in found["fix"]
    assert "topo -p2p r" in found["fix"]


def test_an_nvswitch_topology_does_not_ask_about_pcie_peer_to_peer(cli, tmp_path):
    found = audit(cli, tmp_path, {"topo.txt": verbatim("topo_12_8xH100_hgx_nv18_10nic_rail_truncated.txt")})
    assert "audit-pcie-p2p-unverified" not in found


def test_ibdev2netdev_down_on_ipoib_is_explained_not_alarmed(cli, tmp_path):
    found = audit(cli, tmp_path, {"ibdev2netdev.txt": verbatim("blind4_healthy_ibdev2netdev_down_pure_ib.txt")})
    ipoib = found["audit-ipoib-down-is-not-the-port"]
    assert ipoib["severity"] == "info" and "ibp26s0 (mlx5_0:1)" in ipoib["title"]
    assert "ibstat" in ipoib["fix"]
    roce = found["audit-roce-netdev-without-link"]
    assert roce["severity"] == "advice" and "enp27s0f1np1 (mlx5_2:1)" in roce["title"]
    assert not [r for r, f in found.items() if f["severity"] in ("warning", "error") and r.startswith("audit-r")]
