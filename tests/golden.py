"""The golden transcripts in the project's top-level `transcripts/` folder: which sessions they are, and
how to record them again.

Each case is a real consultation run the way a user runs it: a one-shot command with `--record`, or
`advisor chat --plain` fed the lines a user typed. Re-record every case after a deliberate change of an
answer (the diff of `transcripts/` then shows the change for review):

    python -m tests.golden

or only some: `python -m tests.golden recommend-seed-60-users-de audit-esc8000a-pcie-link-de`.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "transcripts"
AUDIT = "tests/data/audit"


@dataclass(frozen=True)
class Case:
    """One golden session: a command line (paths relative to the project) or the lines typed in a chat."""

    name: str
    argv: tuple[str, ...] = ()
    typed: tuple[str, ...] = ()
    lang: str = "en"


CASES = (
    # seed article: 60 users of Llama 3.3 70B FP8 on two RTX PRO 6000 (TP 2 holds 83)
    Case("recommend-seed-60-users-en", ("recommend", "tests/data/scenario-rtx-pro-60-users.yaml", "--record")),
    Case(
        "recommend-seed-60-users-de",
        ("recommend", "tests/data/scenario-rtx-pro-60-users.yaml", "--lang", "de", "--record"),
        lang="de",
    ),
    # seed article: 20 users fit a copy per card
    Case(
        "recommend-seed-20-users-en",
        ("recommend", "tests/data/scenario-rtx-pro-60-users.yaml", "--users", "20", "--record"),
    ),
    # the 405B case on a 4-card H200 NVL bridge domain
    Case(
        "recommend-405b-h200-nvl-de",
        (
            "recommend",
            "--model",
            "llama 3.1 405b",
            "--precision",
            "fp8",
            "--gpu",
            "h200 nvl",
            "--gpus",
            "8",
            "--nvlink",
            "bridge-4",
            "--users",
            "16",
            "--context",
            "8k",
            "--lang",
            "de",
            "--record",
        ),
        lang="de",
    ),
    # a real capture set: RTX PRO 6000 on PCIe only, SGLang with custom all-reduce disabled
    Case(
        "audit-rtx-pro-6000-pcie-en",
        (
            "audit",
            f"{AUDIT}/smi_05_4xRTXPRO6000_query_gpu_csv_noheader.txt",
            f"{AUDIT}/launch_02_vllm_docker_compose_command_list_tp2_device_ids.txt",
            f"{AUDIT}/log_02_sglang_8xRTXPRO6000_custom_allreduce_disabled_pcie_only.txt",
            "--record",
        ),
    ),
    # one ASUS ESC8000A host: kernel command line, ACS control lines, an RTX 6000 Ada link at 2.5 GT/s
    Case(
        "audit-esc8000a-pcie-link-de",
        (
            "audit",
            f"{AUDIT}/cmdline_01_esc8000a_grub_amd_iommu_off_iommu_pt.txt",
            f"{AUDIT}/lspci_02_esc8000a_grep_acsctl_all_disabled.txt",
            f"{AUDIT}/lspci_01_rtx6000ada_esc8000a_gpu_lnksta_2.5GT_downgraded_bar64G.txt",
            "--lang",
            "de",
            "--record",
        ),
        lang="de",
    ),
    Case(
        "chat-70b-two-rtx-pro-en",
        typed=(
            "llama 3.3 70b in fp8 with fp8 kv cache",
            "2 RTX PRO 6000",
            "60 users",
            "8k",
            "why not pp 2",
            "what if 20 users",
            "quit",
        ),
    ),
    Case(
        "chat-qwen3-235b-h200-nvl-de",
        typed=("qwen3 235b in fp8 auf 4 h200 nvl", "40 Nutzer", "32k", "warum", "beenden"),
        lang="de",
    ),
)


@contextlib.contextmanager
def _recording_in(folder: Path) -> Iterator[None]:
    """Run with the project as the working directory and transcripts going to `folder`."""
    cwd, before = Path.cwd(), os.environ.get("ADVISOR_TRANSCRIPTS")
    os.chdir(ROOT)
    os.environ["ADVISOR_TRANSCRIPTS"] = str(folder)
    try:
        yield
    finally:
        os.chdir(cwd)
        if before is None:
            os.environ.pop("ADVISOR_TRANSCRIPTS", None)
        else:
            os.environ["ADVISOR_TRANSCRIPTS"] = before


def record(case: Case, into: Path) -> tuple[Path, Path]:
    """Run one case as its user would and write its transcript as `into/NAME.json` and `into/NAME.md`."""
    from advisor.cli import main

    quiet = contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO())
    with tempfile.TemporaryDirectory() as tmp, _recording_in(Path(tmp)), quiet[0], quiet[1]:
        if case.typed:
            from advisor.chat import plain
            from advisor.core.engine import Engine

            text = "\n".join(case.typed) + "\n"
            plain.run(Engine.load(), case.lang, None, stdin=io.StringIO(text), stdout=io.StringIO())
        else:
            main(list(case.argv))
        (json_file,) = Path(tmp).glob("*.json")
        into.mkdir(parents=True, exist_ok=True)
        out_json, out_md = into / f"{case.name}.json", into / f"{case.name}.md"
        shutil.copyfile(json_file, out_json)
        shutil.copyfile(json_file.with_suffix(".md"), out_md)
    return out_json, out_md


def main(names: list[str]) -> int:
    """Record the named cases (all when none is named) into `transcripts/`."""
    chosen = [c for c in CASES if not names or c.name in names]
    unknown = set(names) - {c.name for c in CASES}
    if unknown:
        print(f"unknown case(s): {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    for case in chosen:
        json_file, _ = record(case, FOLDER)
        print(f"recorded {json_file.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
