"""Transcripts of consultations and audits, for support tickets: record, recover, replay, list.

A session appends each turn to a journal (JSON lines) and flushes it to disk before the answer is
shown, so a killed process leaves every answered turn behind; `advisor transcripts recover`
completes such a journal. Final files (Markdown for people, JSON `advisor.transcript/1` for tools)
are written to a temporary file and linked into place, so they appear whole and are never
overwritten. Everything is redacted before it is written, unless the user opts out.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import secrets
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from advisor import __version__
from advisor.errors import AdvisorError, InputError
from advisor.i18n import label
from advisor.redact import Redactor
from advisor.redact.vocabulary import SafeNames

SCHEMA = "advisor.transcript/1"
ENV_FOLDER = "ADVISOR_TRANSCRIPTS"


class TranscriptError(AdvisorError):
    """A transcript could not be written (full disk, read-only folder); the consultation goes on."""


def default_folder() -> Path:
    """`transcripts/` in the working directory, or $ADVISOR_TRANSCRIPTS."""
    return Path(os.environ.get(ENV_FOLDER) or "transcripts")


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")


def rule_hashes(engine: Any) -> dict[str, str]:
    """A short hash of each rule's YAML-derived content, to tell later which rules changed."""
    out = {}
    for rid, rule in engine.rules.rules.items():
        text = json.dumps(
            [
                rule.when.text,
                rule.severity,
                rule.effect,
                rule.scope,
                rule.explain.get("en"),
                rule.explain.get("de"),
                rule.title.get("en"),
                [c.__dict__ for c in rule.cite],
            ],
            sort_keys=True,
            default=str,
        )
        out[rid] = hashlib.sha256(text.encode()).hexdigest()[:12]
    return out


Brief = Callable[[Any], dict[str, Any] | None]


def summary(rec: Any, brief: Brief | None = None) -> dict[str, Any] | None:
    """What a recommendation or audit concluded, in the transcript's terms; an audit also carries what
    `replay` needs (its facts with their evidence lines, scenario and layout). `brief` writes what a
    support ticket needs in the result's language (advisor.render.ticket.brief, given by the caller)."""
    if rec is None:
        return None
    ticket = brief(rec) if brief is not None else None
    return {**_summary(rec), **({"ticket": ticket} if ticket else {})}


def _summary(rec: Any) -> dict[str, Any]:
    if hasattr(rec, "findings") and hasattr(rec, "figures"):
        return {
            "layout": rec.layout.as_dict() if rec.layout else None,
            "layout_label": rec.layout.label() if rec.layout else None,
            "figures": rec.figures,
            "rules": sorted(f.rule for f in rec.findings),
            "findings": [{"rule": f.rule, "severity": f.severity, "title": f.title} for f in rec.findings],
            "sources": sorted({c.source for f in rec.findings for c in f.sources}),
            "input": rec.input,
        }
    return {
        "rules": sorted(f.rule for f in rec.findings),
        "findings": [
            {"rule": f.rule, "severity": f.severity, "title": f.title, "suppressed": bool(f.suppressed)}
            for f in rec.findings
        ],
        "summary": rec.summary(),
        "input": {"files": [i.path for i in rec.inputs]},
        **({"replay": rec.replay} if rec.replay else {}),
    }


def _fsync_append(path: Path, record: dict[str, Any]) -> None:
    line = json.dumps(record, ensure_ascii=False, default=str) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


def _rewrite(path: Path, records: list[dict[str, Any]]) -> None:
    """Replace a journal whole: written beside it, flushed, then renamed over it."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            for record in records:
                fh.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_new(path: Path, text: str) -> None:
    """Write `text` to `path` atomically; refuse to replace an existing file."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.link(tmp, path)
    except FileExistsError:
        raise TranscriptError("refusing to overwrite an existing transcript", where=str(path)) from None
    finally:
        tmp.unlink(missing_ok=True)


@dataclass
class Recorder:
    """One session's journal; `turn` after every answer, `close` at the end. The ticket block (`brief`)
    is written with the end record only: it evaluates the assumptions' other answers (tens of ms), which
    no turn should wait for; a recovered session that never closed shows its last result without it."""

    path: Path
    redactor: Redactor | None
    header: dict[str, Any]
    turns: int = 0
    closed: bool = False
    failed: str | None = None
    on_error: Callable[[str], None] | None = field(default=None, repr=False)
    brief: Brief | None = field(default=None, repr=False)
    records: list[dict[str, Any]] = field(default_factory=list, repr=False)

    @classmethod
    def start(
        cls,
        kind: str,
        engine: Any,
        folder: Path | None = None,
        lang: str = "en",
        redact: bool = True,
        on_error: Callable[[str], None] | None = None,
        brief: Brief | None = None,
    ) -> Recorder:
        """Open a new journal in `folder`; a folder that cannot be written is reported, not fatal.
        `brief(result)` gives the ticket block of a result (see `summary`)."""
        folder = folder or default_folder()
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
        sid = f"{kind}-{stamp}-{secrets.token_hex(3)}"
        header = {
            "type": "start",
            "schema": SCHEMA,
            "id": sid,
            "kind": kind,
            "advisor_version": __version__,
            "rule_base_hash": engine.rule_base_hash,
            "knowledge_base_hash": engine.knowledge_hash,
            "rule_hashes": rule_hashes(engine),
            "lang": lang,
            "redacted": redact,
            "started_at": _now(),
        }
        kb = getattr(engine, "kb", None)
        redactor = Redactor(SafeNames.of(kb) if kb is not None else None) if redact else None
        rec = cls(folder / f"{sid}.journal", redactor, header, on_error=on_error, brief=brief)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(rec.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            os.close(fd)
            _fsync_append(rec.path, header)
        except OSError as exc:
            rec._fail(f"transcript not recorded: {exc.strerror or exc} ({folder})")
        return rec

    def _fail(self, message: str) -> None:
        self.failed = message
        if self.on_error:
            self.on_error(message)

    def _clean(self, data: Any) -> Any:
        return self.redactor.document(data) if self.redactor else data

    def _write(self, record: dict[str, Any]) -> None:
        """Append a redacted record; when it taught the redactor a value that earlier records hold
        (a host named only now), rewrite the journal so those records hide it too."""
        known = len(self.redactor.mapping) if self.redactor else 0
        clean = self._clean(record)
        if self.redactor and len(self.redactor.mapping) > known and self.records:
            again = [self.redactor.value(r) for r in self.records]
            if again != self.records:
                self.records = again
                _rewrite(self.path, [self.header, *again, clean])
                self.records.append(clean)
                return
        _fsync_append(self.path, clean)
        self.records.append(clean)

    def turn(
        self, said: str, reply: str, rec: Any = None, understood: dict[str, Any] | None = None, markdown: bool = False
    ) -> None:
        """Append one answered turn and flush it to disk (before the caller shows the answer); `markdown`
        says the reply is Markdown (the chat's) rather than preformatted text (a report)."""
        if self.failed or self.closed:
            return
        self.turns += 1
        record = {
            "type": "turn",
            "n": self.turns,
            "at": _now(),
            "said": said,
            "understood": understood or {},
            "reply": reply,
            "format": "markdown" if markdown else "text",
            "result": summary(rec),  # the ticket block waits for `close`: it is off the answer's path
        }
        try:
            self._write(record)
        except OSError as exc:
            self._fail(f"transcript stopped at turn {self.turns}: {exc.strerror or exc}")

    def close(self, rec: Any = None) -> tuple[Path, Path] | None:
        """Mark the journal complete and write the final Markdown and JSON files."""
        if self.failed or self.closed:
            return None
        self.closed = True
        try:
            self._write({"type": "end", "at": _now(), "result": summary(rec, self.brief)})
            return finish(self.path)
        except (OSError, TranscriptError) as exc:
            self._fail(f"transcript not finished: {getattr(exc, 'strerror', None) or exc}")
            return None


MAX_BYTES = 64 * 1024 * 1024  # far above any consultation; a bigger file is not a transcript


def read_text(path: Path, what: str = "transcript") -> str:
    """A transcript file's text: only a regular file under the size limit, in UTF-8 (a journal's torn
    last line, cut inside a character by a kill, is dropped)."""
    try:
        info = path.stat()
    except OSError as exc:
        raise InputError(f"cannot read the {what}: {exc.strerror or exc}", where=str(path)) from None
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"not a regular file (a {what} is a file the advisor wrote)", where=str(path))
    if info.st_size > MAX_BYTES:
        raise InputError(f"{info.st_size:,} bytes is too large for a {what} (limit {MAX_BYTES:,})", where=str(path))
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read the {what}: {exc.strerror or exc}", where=str(path)) from None
    if data[:2] in (b"\xff\xfe", b"\xfe\xff") or b"\x00" in data[:4096]:
        raise InputError(f"the {what} is UTF-16 or binary; transcripts are UTF-8 text", where=str(path))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        head, newline, _torn = data.rpartition(b"\n")
        if not newline or exc.start <= len(head):  # not only in a torn last line: not UTF-8 text
            raise InputError(
                f"the {what} is not UTF-8 text (invalid byte at offset {exc.start})", where=str(path)
            ) from None
    return read_utf8(head + b"\n", path, what)


def read_utf8(data: bytes, path: Path, what: str) -> str:
    """`data` as UTF-8, or one clear error."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"the {what} is not UTF-8 text (invalid byte at offset {exc.start})", where=str(path)
        ) from None


def _type_name(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "true/false", type(None): "null"}.get(
        type(value), "a number" if isinstance(value, (int, float)) else type(value).__name__
    )


def _expect(value: Any, kinds: type | tuple[type, ...], path: str, where: str, wanted: str) -> Any:
    """`value` if it has one of `kinds`, else one clear error naming the field (true/false is no number)."""
    wanted_kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    if isinstance(value, wanted_kinds) and (bool in wanted_kinds or not isinstance(value, bool)):
        return value
    raise InputError(f"{path}: expected {wanted}, got {_type_name(value)}", where=where)


HEADER_FIELDS = ("id", "kind", "started_at")


def check_header(header: dict[str, Any], where: str) -> None:
    """The start record names the transcript: id, kind and start time as strings; hashes as strings."""
    for key in HEADER_FIELDS:
        if key not in header:
            raise InputError(f"the transcript has no {key!r}", where=where)
        _expect(header[key], str, key, where, "a string")
    for key in ("advisor_version", "rule_base_hash", "knowledge_base_hash", "lang"):
        if key in header:
            _expect(header[key], str, key, where, "a string")
    if "rule_hashes" in header:
        hashes = _expect(header["rule_hashes"], dict, "rule_hashes", where, "an object")
        for rid, h in hashes.items():
            _expect(h, str, f"rule_hashes.{rid}", where, "a string")


def check_result(result: Any, where: str, path: str = "result") -> None:
    """A recorded result has the shapes the Markdown and replay read: figures an object of numbers,
    findings a list of objects with rule, severity and title, rules a list of ids."""
    if result is None:
        return
    _expect(result, dict, path, where, "an object")
    if "figures" in result:
        figures = _expect(result["figures"], dict, f"{path}.figures", where, "an object")
        for name, value in figures.items():
            if value is not None:
                _expect(value, (int, float), f"{path}.figures.{name}", where, "a number or null")
    if "findings" in result:
        for i, f in enumerate(_expect(result["findings"], list, f"{path}.findings", where, "a list")):
            _expect(f, dict, f"{path}.findings[{i}]", where, "an object")
            for key in ("rule", "severity", "title"):
                _expect(f.get(key), str, f"{path}.findings[{i}].{key}", where, "a string")
    for key in ("rules", "sources"):
        if key in result:
            for i, item in enumerate(_expect(result[key], list, f"{path}.{key}", where, "a list")):
                _expect(item, str, f"{path}.{key}[{i}]", where, "a string")
    for key in ("layout_label",):
        if result.get(key) is not None:
            _expect(result[key], str, f"{path}.{key}", where, "a string")
    for key in ("layout", "input", "ticket", "replay"):
        if result.get(key) is not None:
            _expect(result[key], dict, f"{path}.{key}", where, "an object")


def read_journal(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any] | None]:
    """Header, turns and end record of a journal; a torn last line (killed mid-write) is dropped; a
    record of the wrong shape is refused with the line and field it is on."""
    header: dict[str, Any] | None = None
    turns: list[dict[str, Any]] = []
    end: dict[str, Any] | None = None
    for n, line in enumerate(read_text(path, "journal").splitlines(), 1):
        try:
            record = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            continue
        where = f"{path}:{n}"
        _expect(record, dict, "journal record", where, "an object")
        kind = record.get("type")
        if kind == "start":
            check_header(record, where)
            header = record
        elif kind == "turn":
            for key in ("said", "reply"):
                _expect(record.get(key, ""), str, key, where, "a string")
            _expect(record.get("understood") or {}, dict, "understood", where, "an object")
            check_result(record.get("result"), where)
            turns.append(record)
        elif kind == "end":
            check_result(record.get("result"), where)
            end = record
    if header is None:
        raise InputError("not a transcript journal (no start record)", where=str(path))
    return header, turns, end


def document(path: Path) -> dict[str, Any]:
    """The JSON transcript built from a journal."""
    header, turns, end = read_journal(path)
    final = (end or {}).get("result") or next((t.get("result") for t in reversed(turns) if t.get("result")), None)
    return {
        "schema": SCHEMA,
        "id": header["id"],
        "kind": header["kind"],
        "advisor_version": header.get("advisor_version", "?"),
        "rule_base_hash": header.get("rule_base_hash", "?"),
        "knowledge_base_hash": header.get("knowledge_base_hash", "?"),
        "rule_hashes": header.get("rule_hashes", {}),
        "lang": header.get("lang", "en"),
        "redacted": header.get("redacted", True),
        "started_at": header["started_at"],
        "ended_at": (end or {}).get("at"),
        "complete": end is not None,
        "inputs": (final or {}).get("input"),
        "turns": [{k: t.get(k) for k in ("n", "at", "said", "understood", "reply", "format")} for t in turns],
        "result": final,
    }


def _label(key: str, lang: str) -> str:
    """A frame label in `lang`; a figure's own label where it has one, else its name."""
    try:
        return label(key, lang)
    except KeyError:
        return key


def markdown(doc: dict[str, Any]) -> str:
    """The transcript as it reads pasted into a ticket, framed in the session's language."""
    lang = doc.get("lang") or "en"

    def say(key: str, **values: Any) -> str:
        return label(key, lang).format(**values)

    out = [
        f"# {say('transcript_title')} {doc['id']}",
        "",
        f"- {say('transcript_kind')}: {_label('kind_' + doc['kind'], lang)} · "
        + say(
            "transcript_versions",
            version=doc["advisor_version"],
            rules=doc["rule_base_hash"],
            knowledge=doc["knowledge_base_hash"],
        ),
        f"- {say('transcript_started', at=doc['started_at'])}"
        + (say("transcript_ended", at=doc["ended_at"]) if doc["ended_at"] else f" ({say('transcript_recovered')})"),
        "- " + (say("transcript_redacted") if doc["redacted"] else say("transcript_not_redacted")),
        "",
    ]
    result = doc.get("result") or {}
    ticket = result.get("ticket") if isinstance(result.get("ticket"), dict) else None
    if ticket:
        out += _ticket(ticket, lang)
    user, advisor = say("transcript_user"), say("transcript_advisor")
    if ticket and doc["turns"]:
        out += [f"## {say('transcript_conversation')}", ""]
    for t in doc["turns"]:
        reply = str(t.get("reply") or "")
        if t.get("format") == "markdown":
            shown = f"\n\n{reply.rstrip()}"
        else:
            shown = f"\n\n```text\n{reply.rstrip()}\n```" if "\n" in reply else f" {reply}"
        out += [f"**{user}:** {t['said']}", "", f"**{advisor}:**{shown}", ""]
    if result and not ticket:
        out += [f"## {say('transcript_result')}", ""]
        if result.get("layout_label"):
            out.append(f"{say('transcript_layout')}: **{result['layout_label']}**")
        for name, value in (result.get("figures") or {}).items():
            if value is not None:
                out.append(f"- {_label(name, lang)}: {value}")
    if result.get("findings") and not (ticket and ticket.get("findings")):
        out += ["", f"{label('findings', lang)}:"]
        out += [f"- {f['severity']}: {f['title']} (`{f['rule']}`)" for f in result["findings"]]
    if result.get("sources"):
        out += ["", f"{label('sources', lang)}: " + ", ".join(result["sources"])]
    return "\n".join(out) + "\n"


def _ticket(ticket: dict[str, Any], lang: str) -> list[str]:
    """The summary a ticket opens with: question and answer, key figures, launch commands,
    alternatives with why not, assumptions, open questions (audits: findings with their evidence)."""

    def say(key: str) -> str:
        return label(key, lang)

    out = [f"## {say('transcript_summary')}", ""]
    if ticket.get("question"):
        out.append(f"- **{say('transcript_question')}:** {ticket['question']}")
    answer, shown = ticket.get("answer") or "", ticket.get("layout") or ""
    if shown:  # the layout as the launch lines and the tables name it, then what it means
        rest = answer[len(shown) :].lstrip(" —") if answer.startswith(shown) else answer
        out.append(f"- {say('transcript_layout')}: **{shown}**" + (f" — {rest}" if rest and rest != shown else ""))
    elif answer:
        out.append(f"- **{say('transcript_answer')}:** {answer}")
    if ticket.get("deployed"):
        out.append(f"- **{say('deployed_layout')}:** {ticket['deployed']}")
    deploy = ticket.get("deploy") if isinstance(ticket.get("deploy"), dict) else None
    if deploy:  # what the audit's deploy record says, in the words the ticket block was written in
        where = label("ticket_on_gpus", lang).format(gpus=deploy["gpus"])
        if deploy["differs"]:
            was = label("ticket_on_gpus", lang).format(gpus=deploy["deployed_gpus"])
            out.append(
                f"- **{say('ticket_deploy_instead')}:** {deploy['layout']} {where} "
                f"({say('instead_of')} {deploy['deployed_layout']} {was})"
            )
        else:
            out.append(f"- **{say('ticket_deploy_confirmed')}:** {deploy['layout']} {where}")
        out += [f"  - {name}: {value}" for name, value in deploy.get("difference") or []]
        if deploy.get("against"):
            out.append(f"  - {say('ticket_rules_against')}: " + ", ".join(f"`{r}`" for r in deploy["against"]))
    out.append("")
    if ticket.get("figures"):
        out += ["| | |", "|---|---:|"]
        out += [f"| {name} | {value} |" for name, value in ticket["figures"]]
        out.append("")
    for f in ticket.get("findings") or []:
        out.append(f"- **{_label('severity_' + str(f['severity']), lang)}** — {f['title']} (`{f['rule']}`)")
        if f.get("fix"):
            out.append(f"  *{say('fix')}:* {f['fix']}")
        out += [f"  *{say('evidence')}:* `{line}`" for line in f.get("evidence") or []]
    if ticket.get("findings"):
        out.append("")
    if ticket.get("launch"):
        out += [f"## {say('launch')}", ""]
        for engine, cmd in ticket["launch"].items():
            out += [f"{engine}:", "```sh", cmd, "```"]
        out.append("")
    if ticket.get("alternatives"):
        out += [f"## {say('alternatives')}", ""]
        out += [f"- **{a['layout']}** — {say('why_not')}: {a['why_not'] or '–'}" for a in ticket["alternatives"]]
        out.append("")
    if ticket.get("assumptions"):
        out += [f"## {say('assumptions_head')}", ""]
        for a in ticket["assumptions"]:
            out.append(f"- {a['assumed']}")
            out += [f"  - {say('otherwise')}: {b}" for b in a.get("otherwise") or []]
        out.append("")
    if ticket.get("open_questions"):
        out += [f"## {say('unknowns')}", ""]
        out += [f"- {q}" for q in ticket["open_questions"]]
        out.append("")
    return out


def finish(journal: Path) -> tuple[Path, Path]:
    """Write the final Markdown and JSON next to the journal."""
    doc = document(journal)
    md_path = journal.with_suffix(".md")
    json_path = journal.with_suffix(".json")
    write_new(json_path, json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n")
    write_new(md_path, markdown(doc))
    return md_path, json_path


def journals(folder: Path) -> list[Path]:
    """The journals of a transcript folder, in name order."""
    try:
        return sorted(folder.glob("*.journal"))
    except OSError as exc:
        raise InputError(f"cannot read the transcript folder: {exc.strerror or exc}", where=str(folder)) from None


def recover(folder: Path, problems: list[str] | None = None) -> list[Path]:
    """Complete every journal without final files (a session that was killed); a journal that cannot
    be read is named in `problems` (raised when no list is given) and the others are still recovered."""
    done = []
    for journal in journals(folder):
        if journal.with_suffix(".json").exists():
            continue
        try:
            finish(journal)
        except InputError as exc:
            if problems is None:
                raise
            problems.append(exc.one_line())
            continue
        done.append(journal.with_suffix(".json"))
    return done


def listing(folder: Path, problems: list[str] | None = None) -> list[dict[str, Any]]:
    """Every transcript in a folder: id, kind, start, turns, complete, layout; a journal that cannot be
    read is named in `problems`."""
    rows = []
    for journal in journals(folder):
        try:
            doc = document(journal)
        except AdvisorError as exc:
            if problems is not None:
                problems.append(exc.one_line())
            continue
        result = doc.get("result") or {}
        rows.append(
            {
                "id": doc["id"],
                "kind": doc["kind"],
                "started_at": doc["started_at"],
                "turns": len(doc["turns"]),
                "complete": doc["complete"],
                "final_files": journal.with_suffix(".json").exists(),
                "layout": result.get("layout_label"),
            }
        )
    return rows


def find(folder: Path, ident: str) -> Path:
    """The journal of a transcript id (or a unique prefix of it)."""
    matches = [p for p in journals(folder) if p.stem == ident or p.stem.startswith(ident)]
    if len(matches) != 1:
        raise InputError(
            f"{'no' if not matches else 'more than one'} transcript matches {ident!r}",
            where=str(folder),
            hint="see `advisor transcripts list`",
        )
    return matches[0]


@dataclass
class Replay:
    """What today's rules and knowledge say for a recorded scenario, compared with then."""

    same: bool
    before: dict[str, Any]
    after: dict[str, Any]
    rule_base_changed: bool
    rules_added: list[str]
    rules_removed: list[str]
    rules_changed: list[str]
    fired_added: list[str]
    fired_removed: list[str]
    figures_changed: dict[str, tuple[Any, Any]] = field(default_factory=dict)  # name: (then, now)


def _raw_scenario(inputs: dict[str, Any]) -> dict[str, Any]:
    """The scenario mapping `build` reads, from a recorded scenario (catalogue ids where recorded)."""
    raw = {k: v for k, v in inputs.items() if k in ("model", "precision", "kv_cache_dtype", "engine")}
    raw["model"] = inputs.get("model_id") or inputs["model"]
    hw = {k: v for k, v in inputs["hardware"].items() if k != "gpu_id" and v is not None}
    hw["gpu"] = inputs["hardware"].get("gpu_id") or hw["gpu"]
    raw["hardware"] = hw
    raw["workload"] = {k: v for k, v in inputs["workload"].items() if v is not None}
    return raw


def load(path: Path) -> dict[str, Any]:
    """A JSON transcript (`advisor.transcript/1`) read and checked for the shapes replay reads."""
    try:
        doc = json.loads(read_text(path))
    except (json.JSONDecodeError, RecursionError) as exc:
        raise InputError(f"not a JSON transcript: {str(exc)[:200]}", where=str(path)) from None
    where = str(path)
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise InputError(f"not an {SCHEMA} file", where=where)
    check_header(doc, where)
    check_result(doc.get("result"), where)
    if doc["kind"] == "audit":
        recorded = (doc.get("result") or {}).get("replay")
        if recorded is not None:
            _check_audit_replay(recorded, where)
    else:
        inputs = doc.get("inputs")
        if inputs is not None:
            _expect(inputs, dict, "inputs", where, "an object")
            for key in ("hardware", "workload"):
                if key not in inputs:
                    raise InputError(f"inputs: the recorded scenario has no {key!r}", where=where)
                _expect(inputs[key], dict, f"inputs.{key}", where, "an object")
            _expect(inputs.get("model"), str, "inputs.model", where, "a string")
    return doc


def _check_audit_replay(recorded: Any, where: str) -> None:
    """An audit's recorded facts: each a scalar value with its evidence line; scenario and deployment mappings."""
    _expect(recorded, dict, "result.replay", where, "an object")
    facts = _expect(recorded.get("facts") or {}, dict, "result.replay.facts", where, "an object")
    for name, fact in facts.items():
        _expect(fact, dict, f"result.replay.facts.{name}", where, "an object")
        _expect(fact.get("value"), (str, int, float, bool), f"result.replay.facts.{name}.value", where, "a value")
    _expect(recorded.get("scenario") or {}, dict, "result.replay.scenario", where, "an object")
    dep = _expect(recorded.get("deployment") or {}, dict, "result.replay.deployment", where, "an object")
    for key, value in dep.items():
        if key in ("tp", "pp", "dp", "ep"):
            _expect(value, int, f"result.replay.deployment.{key}", where, "an integer")


def replay(engine: Any, doc: dict[str, Any], lang: str = "en") -> Replay:
    """Run the recorded inputs through today's rules; name what changed."""
    from advisor.inputs.scenario import build

    before = doc.get("result") or {}
    if doc.get("kind") == "audit":
        if not before.get("replay"):
            raise InputError(
                "this audit transcript does not carry the facts replay needs (recorded before replay existed)",
                hint="audit the bundle again with --record",
            )
        after = replay_audit(engine, before["replay"])
    else:
        if not doc.get("inputs") or "model" not in (doc.get("inputs") or {}):
            raise InputError("this transcript has no scenario to replay")
        rec = engine.evaluate(build(_raw_scenario(dict(doc["inputs"])), engine.kb, where="transcript"), lang)
        after = summary(rec) or {}
    after = json.loads(json.dumps(after, default=str))  # compared as the transcript holds it
    then, now = doc.get("rule_hashes", {}), rule_hashes(engine)
    fired_then, fired_now = set(before.get("rules", [])), set(after.get("rules", []))
    figures_then, figures_now = before.get("figures") or {}, after.get("figures") or {}
    figures = {
        name: (figures_then.get(name), figures_now.get(name))
        for name in sorted(set(figures_then) | set(figures_now))
        if figures_then.get(name) != figures_now.get(name)
    }
    return Replay(
        same=before.get("layout") == after.get("layout") and fired_then == fired_now and not figures,
        before=before,
        after=after,
        rule_base_changed=doc.get("rule_base_hash") != engine.rule_base_hash,
        rules_added=sorted(set(now) - set(then)),
        rules_removed=sorted(set(then) - set(now)),
        rules_changed=sorted(r for r in set(now) & set(then) if now[r] != then[r]),
        fired_added=sorted(fired_now - fired_then),
        fired_removed=sorted(fired_then - fired_now),
        figures_changed=figures,
    )


def replay_audit(engine: Any, recorded: dict[str, Any]) -> dict[str, Any]:
    """Today's rules on an audit's recorded facts, judged by the audit's own judge (advisor.audit.replay)."""
    from advisor.audit import replay as judge_again

    verdict = judge_again(engine, recorded)
    return {
        "rules": sorted({f.rule for f in verdict.findings}),
        "undecided": sorted({f.rule for f in verdict.firings if f.outcome is None}),
        "layout_label": verdict.rec.layout.label() if verdict.rec is not None and verdict.rec.layout else None,
        "problems": verdict.problems,
    }


def resolve(folder: Path, ident: str) -> dict[str, Any]:
    """A transcript by its JSON file's path, or by id (or a unique prefix) in `folder`."""
    path = Path(ident)
    if path.suffix == ".json" and path.is_file():
        return load(path)
    return document(find(folder, ident))


def _flat(value: Any, prefix: str) -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, inner in value.items():
            out.update(_flat(inner, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: value}


DIFFERED = ("kind", "lang", "advisor_version", "rule_base_hash", "knowledge_base_hash")


def differences(a: dict[str, Any], b: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """What differs between two transcripts, as (what, in A, in B): the kind, versions and hashes, every
    input field, the layout, every figure, and the rules that fired only in one of them."""
    out = [(key, a.get(key), b.get(key)) for key in DIFFERED if a.get(key) != b.get(key)]
    inputs_a, inputs_b = _flat(a.get("inputs") or {}, "inputs"), _flat(b.get("inputs") or {}, "inputs")
    for key in sorted(set(inputs_a) | set(inputs_b)):
        if inputs_a.get(key) != inputs_b.get(key):
            out.append((key, inputs_a.get(key), inputs_b.get(key)))
    result_a, result_b = a.get("result") or {}, b.get("result") or {}
    if result_a.get("layout_label") != result_b.get("layout_label"):
        out.append(("layout", result_a.get("layout_label"), result_b.get("layout_label")))
    figures_a, figures_b = result_a.get("figures") or {}, result_b.get("figures") or {}
    for name in sorted(set(figures_a) | set(figures_b)):
        if figures_a.get(name) != figures_b.get(name):
            out.append((f"figures.{name}", figures_a.get(name), figures_b.get(name)))
    fired_a, fired_b = set(result_a.get("rules") or ()), set(result_b.get("rules") or ())
    out += [(f"finding {rule}", "fired", None) for rule in sorted(fired_a - fired_b)]
    out += [(f"finding {rule}", None, "fired") for rule in sorted(fired_b - fired_a)]
    return out
