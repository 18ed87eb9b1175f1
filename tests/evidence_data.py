"""Reading the real captured outputs under tests/data/audit: the header says where each came from."""

from __future__ import annotations

from pathlib import Path

AUDIT_DATA = Path(__file__).parent / "data" / "audit"
MARKER = "# ----- verbatim output follows -----"


def verbatim(name: str) -> str:
    """The captured output of a test data file, without its provenance header."""
    text = (AUDIT_DATA / name).read_text(encoding="utf-8")
    return text.split(MARKER, 1)[1].lstrip("\n")


def bundle(folder: Path, files: dict[str, str]) -> Path:
    """A bundle folder with `files` (name -> text), as `advisor collect` or a customer would send it."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


# A customer's plan: Llama 3.3 70B in FP8 on L40S cards, TP 2 on GPUs 0 and 2 (the audit tests'
# deployment file).
L40S_PLAN = """\
model: Llama 3.3 70B Instruct
precision: fp8
kv_cache_dtype: fp8
hardware: {gpu: L40S}
workload: {concurrent_conversations: 16, context_tokens: 8192}
deployment:
  engine: vllm
  tp: 2
  gpus: [0, 2]
"""
