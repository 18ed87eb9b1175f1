"""The blind audit sets (tests/data/audit-blind-*.yaml) graded as their runs were: each paste given to
`advisor audit` as a file of its own; a problem is diagnosed when a finding at advice or above names one of
its thread's must_mention_any (title, explanation, fix), a healthy machine when nothing is a warning or
an error. A case `not_yet` marks is counted as it comes out, and listed.

`python -m tests.audit_blind [NAME ...]` prints the figure of each set (default: every set) and its misses."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from advisor.cli import main as advisor_main
from tests.evidence_data import verbatim

DATA = Path(__file__).parent / "data"
RANK = {"info": 0, "advice": 1, "warning": 2, "error": 3}


def _findings(text: str) -> list[dict[str, Any]] | None:
    """The audit's findings for one paste; None where the audit read nothing in it."""
    import contextlib
    import io

    with tempfile.TemporaryDirectory() as tmp:
        paste = Path(tmp) / "paste.txt"
        paste.write_text(text, encoding="utf-8")
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            try:
                code = advisor_main(["audit", str(paste), "--format", "json"])
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
    return json.loads(out.getvalue())["findings"] if code in (0, 1) else None


def grade(case: dict[str, Any]) -> tuple[bool, str]:
    """Whether the audit reached the thread's resolution (or stayed quiet on a healthy machine), and why."""
    found = _findings(verbatim(case["file"]))
    if found is None:
        return bool(case["healthy"]), "not read"
    if case["healthy"]:
        loud = [f["rule"] for f in found if RANK[f["severity"]] >= 2]
        return not loud, "loud: " + ", ".join(loud) if loud else "quiet"
    words = [w.lower() for w in case["must_mention_any"]]
    hits = [
        f["rule"]
        for f in found
        if RANK[f["severity"]] >= 1
        and any(w in " ".join(str(f.get(k) or "") for k in ("title", "explanation", "fix")).lower() for w in words)
    ]
    return bool(hits), "named by " + ", ".join(hits) if hits else "said: " + ", ".join(f["rule"] for f in found)


def main() -> None:
    """Print each set's figure and its misses."""
    names = sys.argv[1:] or sorted(p.stem for p in DATA.glob("audit-blind-*.yaml"))
    for name in names:
        cases = yaml.safe_load((DATA / f"{name}.yaml").read_text(encoding="utf-8"))
        graded = [(case, *grade(case)) for case in cases]
        right = sum(ok for _c, ok, _why in graded)
        unread = sum(why == "not read" for _c, _ok, why in graded)
        print(f"{name}: {right}/{len(cases)} ({unread} pastes not read)")
        for case, ok, why in graded:
            if not ok or why == "not read":
                print(f"  - {case['id']}: {'pass' if ok else 'MISS'} ({why})")


if __name__ == "__main__":
    main()
