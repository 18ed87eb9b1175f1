"""Redaction of what a transcript must not carry: hostnames, IP and MAC addresses, GPU UUIDs and
serial numbers, user names in paths, e-mail addresses, tokens and keys.

Each distinct value maps to a stable placeholder within one transcript (host-1, host-2, ...), so
the text still reads: the same host is the same placeholder everywhere.
"""

from __future__ import annotations

import re
from typing import Any

# (kind, pattern, group holding the value) in the order they are applied; secrets first
PATTERNS: tuple[tuple[str, re.Pattern[str], int], ...] = (
    (
        "secret",
        re.compile(
            r"\b(hf_[A-Za-z0-9]{20,}|sk-[A-Za-z0-9_-]{20,}|ghp_[A-Za-z0-9]{20,}|gh[ousr]_[A-Za-z0-9]{20,}"
            r"|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})"
        ),
        1,
    ),
    (
        "secret",
        re.compile(
            r"(?i)\b(?:[A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|APIKEY|ACCESS_KEY)[A-Z0-9_]*)\s*[=:]\s*[\"']?([^\s\"',;]{6,})"
        ),
        1,
    ),
    ("secret", re.compile(r"(?i)\b(?:--(?:api-key|token|hf-token|password))(?:=|\s+)[\"']?([^\s\"']{6,})"), 1),
    ("secret", re.compile(r"(?i)\bBearer\s+([A-Za-z0-9._~+/=-]{12,})"), 1),
    ("email", re.compile(r"\b([A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})\b"), 1),
    (
        "gpu-uuid",
        re.compile(r"\b(GPU-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\b"),
        1,
    ),
    (
        "uuid",
        re.compile(
            r"(?<!GPU-)(?<!MIG-)\b([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\b"
        ),
        1,
    ),
    ("serial", re.compile(r"(?i)(?:Serial Number|Board Part Number|serial)\s*[:=]\s*([A-Za-z0-9-]{6,})"), 1),
    ("mac", re.compile(r"\b((?:[0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2})\b"), 1),
    ("ip", re.compile(r"(?<![\d.])((?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3})(?![\d.])"), 1),
    ("ip", re.compile(r"(?<![:\w])((?:[0-9a-fA-F]{1,4}:){3,7}[0-9a-fA-F]{1,4})(?![:\w])"), 1),
    ("user", re.compile(r"(?:/home/|/Users/|\\Users\\)([A-Za-z0-9._-]+)"), 1),
    ("host", re.compile(r"\b[A-Za-z0-9._-]+@([A-Za-z0-9][A-Za-z0-9.-]*[A-Za-z0-9])(?=[:\s~])"), 1),
    ("user", re.compile(r"\b([A-Za-z0-9._-]+)@[A-Za-z0-9][A-Za-z0-9.-]*[A-Za-z0-9][:\s~]"), 1),
    ("host", re.compile(r"\bPid\s+\d+\s+on\s+(\S+)\s+device"), 1),
    ("host", re.compile(r"(?i)\b(?:hostname|host|node)\s*[:=]\s*([A-Za-z][A-Za-z0-9.-]{2,})"), 1),
)
KEEP = {"localhost", "root", "ubuntu", "admin", "X", "N/A"}


class Redactor:
    """Replaces sensitive values with placeholders that stay the same for the same value."""

    def __init__(self) -> None:
        self.mapping: dict[tuple[str, str], str] = {}
        self.counts: dict[str, int] = {}

    def placeholder(self, kind: str, value: str) -> str:
        """The placeholder of one value, allocating the next number for a new one."""
        key = (kind, value)
        if key not in self.mapping:
            self.counts[kind] = self.counts.get(kind, 0) + 1
            self.mapping[key] = f"{kind}-{self.counts[kind]}"
        return self.mapping[key]

    def text(self, text: str) -> str:
        """`text` with every sensitive value replaced; a value found anywhere is replaced everywhere."""
        for kind, pattern, group in PATTERNS:
            for m in pattern.finditer(text):
                value = m.group(group)
                if self._worth(value):
                    self.placeholder(kind, value)
        for (_kind, value), name in sorted(self.mapping.items(), key=lambda kv: -len(kv[0][1])):
            text = re.sub(rf"(?<![\w.-]){re.escape(value)}(?![\w-])", name, text)
        return text

    @staticmethod
    def _worth(value: str) -> bool:
        return (
            len(value) >= 3
            and value not in KEEP
            and not re.fullmatch(r"(?:host|ip|mac|user|email|secret|serial|uuid|gpu-uuid)-\d+", value)
        )

    def value(self, data: Any) -> Any:
        """Redact every string inside a JSON-like value."""
        if isinstance(data, str):
            return self.text(data)
        if isinstance(data, dict):
            return {k: self.value(v) for k, v in data.items()}
        if isinstance(data, (list, tuple)):
            return [self.value(v) for v in data]
        return data
