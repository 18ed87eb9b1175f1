"""CPU sockets in the machine model: topo -m's SYS halves read as sockets, and groups placed inside them."""

from __future__ import annotations

from pathlib import Path

from advisor.core.layouts import Layout, Machine, aligned_links, place
from advisor.inputs.evidence.registry import contributions, parse_files

AUDIT = Path(__file__).parent / "data" / "audit"


def _socket_fact(name: str) -> list[object]:
    _inputs, parsed = parse_files([AUDIT / name])
    return [c.value for c in contributions(parsed) if c.target.endswith("gpus_per_socket")]


def test_an_eight_gpu_pcie_box_with_sys_between_its_halves_has_four_gpus_per_socket() -> None:
    # lattice/quda#669: GPU0-3 PIX/PXB on one socket, GPU4-7 on the other, SYS between
    assert _socket_fact("topo_08_8gpu_plx_pix_pxb_sys_mlx5_old_legend.txt") == [4]
    # warpem/miss-alignment#106: 4 x L40S, GPU0-1 and GPU2-3 NODE, SYS across
    assert _socket_fact("topo_04_4xL40S_2socket_node_sys_nic_spaces.txt") == [2]


def test_nvswitch_boards_and_uneven_sockets_carry_no_socket_split() -> None:
    # NV18 joins every pair of an HGX H100 board although its NICs sit on two sockets
    assert _socket_fact("topo_12_8xH100_hgx_nv18_10nic_rail_truncated.txt") == []
    # 4 x T4 with GPU0 alone on one socket and three on the other: uneven, not modelled
    assert _socket_fact("topo_18_4xT4_2socket_gpu0_alone_sys_node_no_legend.txt") == []


def test_tp8_across_two_sockets_is_charged_the_cpu_interconnect_and_tp4_pp2_is_not() -> None:
    two_sockets = Machine(1, 8, 1, False, socket=4)
    assert aligned_links(Layout(1, 8, 1), two_sockets) == {"tp": "socket", "pp": "none", "ep": "none", "dp": "none"}
    links = aligned_links(Layout(1, 4, 2), two_sockets)
    assert links is not None and links["tp"] == "pcie" and links["pp"] == "socket"
    placed = place(Layout(1, 4, 2), two_sockets)
    assert placed is not None and placed.groups() == [[[0, 1, 2, 3], [4, 5, 6, 7]]]


def test_copies_that_fit_a_socket_stay_inside_it_and_nvlink_still_wins() -> None:
    placed = place(Layout(2, 3, 1), Machine(1, 8, 1, False, socket=4))
    assert placed is not None and placed.starts == (0, 4)
    one_socket = place(Layout(2, 3, 1), Machine(1, 8, 1, False))
    assert one_socket is not None and one_socket.starts == (0, 3)
    nvswitch = Machine(1, 8, 8, True, socket=4)
    assert aligned_links(Layout(1, 8, 1), nvswitch) == {"tp": "nvlink", "pp": "none", "ep": "none", "dp": "none"}
