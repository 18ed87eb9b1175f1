"""why, how, why not and what if, typed into the chat: the rules and formulas behind the answer,
shown from the same records the reports use (test_dialogue.py covers the variants)."""

from __future__ import annotations

from advisor.core.layouts import Layout
from tests.tui.conftest import drive, say

RTX_60 = ["two RTX PRO 6000", "Llama 3.3 70B FP8 with FP8 KV cache", "60 users"]


def test_why_how_why_not_what_if(build):
    app = build()

    async def script(pilot):
        for text in RTX_60:
            await say(pilot, text)
        session = app.chat.session
        # why, at the context question: what each answer would give
        why = await say(pilot, "why?")
        assert why.question.fact == "context_tokens"
        assert why.text.startswith("**Why I ask about the context (tokens)**")
        assert (
            "| context (tokens) = 2048 | 2 × 1 GPU · conversations " in why.text and "users-exceed-capacity" in why.text
        )
        # how: formula, with numbers, value with unit, kind, source quote and footnote
        how = await say(pilot, "how")
        assert "- **KV cache of one conversation** = **1.25 GiB** (exact) [3]" in how.text
        assert (
            "`kv_gib_per_conversation = kv_bytes_per_token × context_tokens / 2^30` → `163,840 × 8,192 / 2^30`"
            in how.text
        )
        assert "“an FP8 cache of 1.25 GiB per 8,192-token conversation”" in how.text
        # why not: the layout evaluated, what rules it out, beside the recommendation
        why_not = await say(pilot, "why not replicas?")
        assert why_not.text.startswith("**Why not 2 × 1 GPU?**")
        assert "holds 28 conversations, 32 fewer than the 60 users" in why_not.text
        assert "**Not enough KV cache for all users at full context** (`users-exceed-capacity`)" in why_not.text
        assert "| Conversations that fit | 83 | 28 |" in why_not.text
        assert session.c.rec.layout == Layout(1, 2, 1)
        # what if: now and then side by side, nothing kept
        what_if = await say(pilot, "what if 120 users?")
        assert what_if.text.startswith("**What if users = 120?**")
        assert "| Warnings | none | users-exceed-capacity |" in what_if.text
        assert session.c.fields["workload.concurrent_conversations"] == 60
        assert what_if.question.fact == "context_tokens"  # still at the same question

    drive(app, script)
