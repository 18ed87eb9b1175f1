"""Scenarios several tests ask about, written once."""

# The README's first command: Llama 3.3 70B in FP8 with an FP8 cache on two RTX PRO 6000, 60 users at 8k.
README_FIRST = (
    "recommend", "--model", "llama 3.3 70b", "--precision", "fp8", "--kv-cache-dtype", "fp8",
    "--gpu", "rtx pro 6000", "--gpus", "2", "--users", "60", "--context", "8192",
)  # fmt: skip

# Two H100 PCIe (bridge not stated) for Llama 3.1 70B in FP8 and 20 users: one copy per card holds one conversation.
H100_PCIE_70B = (
    "recommend", "--model", "llama 3.1 70b", "--precision", "fp8", "--gpu", "h100 pcie", "--gpus", "2",
    "--users", "20",
)  # fmt: skip
