"""Scenarios several tests ask about, written once."""

# The README's first command: Llama 3.3 70B in FP8 with an FP8 cache on two RTX PRO 6000, 60 users at 8k.
README_FIRST = (
    "recommend", "--model", "llama 3.3 70b", "--precision", "fp8", "--kv-cache-dtype", "fp8",
    "--gpu", "rtx pro 6000", "--gpus", "2", "--users", "60", "--context", "8192",
)  # fmt: skip
