"""Every evidence reader and the chat read in linear time (issue #25): a real capture of the reader's kind
followed by 1 MiB of what would make a careless parser slow (blank lines after a trigger word, one line
that never ends, rows without end, a word repeated) takes at most 6 times the time of 256 KiB of the same
(linear is 4) and under 10 s. CPU time of this process, the best of three runs, so a busy machine does not
count against the reader; `tests/test_regex_safety.py` checks the patterns themselves."""

from __future__ import annotations

import gc
import time
from pathlib import Path

import pytest

from advisor.chat.dialogue import ChatSession
from advisor.core.engine import Engine
from advisor.inputs.evidence.registry import READERS, parse_files
from tests.evidence_data import verbatim

KIB = 1024
RATIO = 6.0
SLACK_S = 0.1  # timer resolution, warm-up and cache effects on inputs that take a tenth of a second
LIMIT_S = 10.0

# (reader kind, a real capture of that kind, the unit repeated after it)
CASES = [
    ("nvidia-smi-topo", "topo_14_2xL4_sys_numa0_numa2_no_legend.txt", "\n"),
    ("nvidia-smi-topo", "topo_14_2xL4_sys_numa0_numa2_no_legend.txt", "GPU0\t X \tNV4\t0-1\n"),
    ("nvidia-smi-p2p", "p2p_01_2xRTX5090_threadripper_GNS.txt", "GPU1\tOK\tX\n"),
    ("nvidia-smi-q", "smi_01_h800_hgx_nvidia_smi_q_i0.txt", "    Product Name : NVIDIA H100\n"),
    ("nvidia-smi-q", "smi_01_h800_hgx_nvidia_smi_q_i0.txt", " "),
    (
        "nvidia-smi-csv",
        "smi_05_4xRTXPRO6000_query_gpu_csv_noheader.txt",
        "0, NVIDIA H100, 00000000:17:00.0, 81559 MiB\n",
    ),
    ("nvidia-smi-nvlink", "smi_03_v100sxm2_azure_nvlink_status_two_links_inactive.txt", "\t Link 0: 25.781 GB/s\n"),
    ("nvidia-smi-nvlink", "smi_03_v100sxm2_azure_nvlink_status_two_links_inactive.txt", "1."),
    ("cmdline", "cmdline_02_2xMI100_ubuntu_iommu_pt_only.txt", "\n"),
    ("dmesg", "dmesg_01_gtx1660_debian_dmar_iommu_enabled_intel_iommu_on.txt", "\n"),
    ("dmesg", "dmesg_02_3x1080Ti_x399_amdvi_io_page_fault_p2p.txt", "AMD-Vi: "),
    ("lspci", "lspci_03_amd_switch_grep_acsctl_srcvalid_plus_nccl_hang.txt", "\t\tACSCtl:\tSrcValid+ ReqRedir+\n"),
    ("lspci", "lspci_03_amd_switch_grep_acsctl_srcvalid_plus_nccl_hang.txt", " "),
    ("launch", "launch_07_vllm_serve_tp8_pp2_2x8xH20.txt", "-"),
    ("launch", "launch_07_vllm_serve_tp8_pp2_2x8xH20.txt", "--tensor-parallel-size 2 "),
    ("launch", "launch_07_vllm_serve_tp8_pp2_2x8xH20.txt", '"'),
    (
        "nccl-tests",
        "nccl_03_8xA100_nvswitch_sendrecv_195GBs.txt",
        "     8      2     float     sum      -1    36.12    0.00    0.00      0\n",
    ),
    (
        "p2p-bandwidth-test",
        "nccl_05_p2pBandwidthLatencyTest_8xH100_hgx_connectivity_all1_truncated.txt",
        "     0\t     1\n",
    ),
    ("engine-log", "fail_26_nccl_nvls_invalid_argument_h100_2185.txt", "NCCL WARN x\n"),
    ("known-failure", "fail_25_sglang_not_enough_memory_mem_fraction.txt", "NCCL WARN Call to posix_fallocate failed "),
    ("deployment", "", "# a comment line\n"),
    ("deployment", "", " "),
]
# the plan a customer writes (deployment.yaml): no capture, the format of the README's example
PLAN = (
    "model: Llama 3.3 70B Instruct\nprecision: fp8\nhardware: {gpu: H100 SXM, gpus_per_node: 8, nodes: 1}\n"
    "workload: {concurrent_conversations: 60, context_tokens: 8192}\ndeployment: {engine: vllm, tp: 4, pp: 1}\n"
)


def _read_time(path: Path, text: str, kind: str) -> float:
    """The file read as the audit reads it (every reader asked, the failure catalogue scanned), and read by
    the reader of `kind` itself, whether or not it would take a file this size."""
    path.write_text(text, encoding="utf-8")
    reader = next(r for r in READERS if r.kind == kind)
    best = float("inf")
    gc.collect()
    gc.disable()  # as timeit does: the collector's passes depend on the whole test session's heap, not the reader
    try:
        for _ in range(3):
            start = time.process_time()
            parse_files([path])
            parsed = reader.parse(text, str(path))
            list(reader.facts(parsed))
            best = min(best, time.process_time() - start)
    finally:
        gc.enable()
    assert parsed.data, (kind, parsed.notes[:3])
    return best


@pytest.mark.parametrize(("kind", "capture", "unit"), CASES, ids=[f"{k}-{u[:12]!r}" for k, _c, u in CASES])
def test_a_megabyte_after_a_real_capture_reads_in_linear_time(tmp_path, kind, capture, unit):
    head = (verbatim(capture) if capture else PLAN) + ("" if unit[:1] in "\n" else "\n")
    small = _read_time(tmp_path / "small.txt", head + unit * (256 * KIB // len(unit)), kind)
    large = _read_time(tmp_path / "large.txt", head + unit * (1024 * KIB // len(unit)), kind)
    assert large < LIMIT_S and large <= RATIO * small + SLACK_S, (small, large)


@pytest.mark.parametrize("unit", ["1 gb ", "8 x H100 ", "what if "])
def test_a_megabyte_typed_into_the_chat_reads_in_linear_time(unit):
    engine = Engine.load()

    def took(size: int) -> float:
        session = ChatSession(engine)
        start = time.process_time()
        session.respond(unit * (size // len(unit)))
        return time.process_time() - start

    small, large = took(256 * KIB), took(1024 * KIB)
    assert large < LIMIT_S and large <= RATIO * small + SLACK_S, (small, large)
