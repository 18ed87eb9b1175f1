"""The conversation behind the chat app: what the user typed becomes an answer, a question about the
result (why, how, why not, what if), evidence (a pasted `nvidia-smi topo -m`) or a command, and each
turn yields one Reply: the Markdown to show, and a snapshot of the facts, the recommendation and the
next question for the side panel.

Guarantees: every decision comes from Consultation and the engine; this module only routes and
renders. Each answered turn is recorded (and flushed) by the transcript recorder before `respond`
returns, so before the app shows it. No Textual here; the app calls `respond` from a worker thread,
one turn at a time.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from advisor.chat import replies
from advisor.chat.consult import ASK_ORDER, FACT_OF_PATH, PATHS, REQUIRED, Consultation, Question, outcome
from advisor.chat.replies import cited
from advisor.chat.strings import choice_label, fact_label, format_value, t
from advisor.core.engine import Engine
from advisor.core.layouts import Layout, parse_layout
from advisor.core.records import Recommendation
from advisor.errors import AdvisorError
from advisor.i18n import LANGS
from advisor.inputs.fields import field_table
from advisor.inputs.freetext import Understood
from advisor.inputs.limits import MAX_LAYOUT_GPUS, check_layout, check_layout_text
from advisor.inputs.scenario import SUFFIXES
from advisor.kb.knowledge import Citation

COMMANDS = ("/help", "/lang", "/sources", "/rules", "/save", "/new", "/report", "/audit", "/set", "/quit")
PANEL_FACTS = (*ASK_ORDER, "engine", "prompt_tokens", "memory_utilization")
RecorderFactory = Callable[[Engine, str], Any]

YES = re.compile(r"^(yes|ja|y|j|sure|klar|yep|yeah|genau|richtig|correct|stimmt)\W*$", re.I)
NO = re.compile(r"^(no|nein|n|nope|nee|falsch|wrong)\W*$", re.I)
# the act of each utterance to the turn that answers it (acts that change no fact among them)
ROUTES = {
    "quit": "_quit",
    "command": "_command",
    "evidence": "_evidence",
    "why": "_why",
    "why_ask": "_why",
    "repeat": "_repeat",
    "how": "_how",
    "why_not": "_why_not",
    "hypothetical": "_what_if",
    "compare": "_compare",
    "concept": "_concept",
    "general": "_concept",
    "question": "_concept",
    "dont_know": "_dont_know",
    "request_save": "_request_save",
    "request_command": "_request_command",
    "request_buy": "_request_buy",
    "out_of_scope": "_out_of_scope",
    "out_of_scope_topic": "_out_of_scope",
    "smalltalk": "_smalltalk",
}


@dataclass(frozen=True)
class FactRow:
    """One line of the facts panel: the fact, its value, and where the value came from."""

    path: str
    fact: str
    label: str
    value: Any
    shown: str
    origin: str


@dataclass(frozen=True)
class Asked:
    """A question as it was asked: the facts known and the questions skipped at that moment."""

    question: Question
    fields: dict[str, Any]
    skipped: frozenset[str]


@dataclass
class Reply:
    """One turn's answer, and a snapshot of everything the panels show after it."""

    said: str
    text: str
    kind: str
    lang: str = "en"
    rec: Recommendation | None = None
    question: Question | None = None
    facts: list[FactRow] = field(default_factory=list)
    notes: list[Citation] = field(default_factory=list)
    understood: dict[str, Any] = field(default_factory=dict)
    action: str | None = None
    report: str | None = None
    suggestions: tuple[str, ...] = ()
    record: bool = True


def parse_intent(text: str, kb: Any = None, asked: str | None = None) -> tuple[str, str]:
    """What a line is, as the chat routes it (advisor/chat/reading.py): ('command', '/x arg'),
    ('evidence', text), ('quit', ''), or an act of knowledge/dialogue.yaml with the text after its cue
    ('why_not', 'tp=4'; 'hypothetical', '120 users'; 'answer', the line)."""
    from advisor.chat.reading import read
    from advisor.kb.knowledge import load

    turn = read(text, kb if kb is not None else load(), asked)
    if turn.act in ("command", "evidence"):
        return turn.act, text.strip()
    return turn.act, turn.rest if turn.act not in ("answer", "correction") else text.strip()


def read_layout(text: str, total: int, per_node: int) -> Layout | None:
    """A layout the user names: 'TP=4', 'tp 2 pp 2', 'replicas' (one copy per GPU), 'one card'.
    Copies fill the machine unless the user gives them, as the candidate layouts do; InputError for a
    degree out of range (tp=0, a 400-digit one)."""
    low = text.lower().strip(" ?!.:")
    check_layout_text(low, MAX_LAYOUT_GPUS, "layout")
    if not re.search(r"\d", low):
        if re.search(r"replica|replikat|cop(y|ies)|kopie|data.?parallel|^dp$", low):
            return Layout(total, 1, 1)
        if re.search(r"\b(one|single|eine[rn]?)\b[^\n]{0,200}?\b(card|gpu|karte)\b", low):
            return Layout(1, 1, 1)
        if re.fullmatch(r"tp|tensor.?parallel(ism)?", low):
            return Layout(max(1, total // per_node), per_node, 1)
        if re.fullmatch(r"pp|pipeline.?parallel(ism)?|pipeline", low):
            return Layout(1, 1, total)
        return None
    low = re.sub(r"\b(one|eine[rn]?)\b", "1", low)
    try:
        layout = parse_layout(low)
    except AdvisorError:
        return None
    check_layout(layout.replicas, layout.tp, layout.pp, layout.ep, None, MAX_LAYOUT_GPUS, "layout")
    if not re.search(r"replica|replikat|dp", low) and layout.replicas == 1 and layout.gpus_per_replica <= total:
        layout = Layout(max(1, total // layout.gpus_per_replica), layout.tp, layout.pp, layout.ep)
    return layout


def _to_value(spec: Any, text: str, words: tuple[tuple[Any, str], ...] = ()) -> Any:
    """A typed value for a fact from what was typed in the side panel or after /set; an enum value may
    also be typed in the words of the field table (`words`: each value with its pattern, "aus" for off)."""
    raw = text.strip()
    low = raw.lower()
    if spec.type == "integer":
        m = re.fullmatch(r"(\d+(?:[.,]\d+)?)\s*([km]?)", low.replace("_", ""))
        if not m:
            raise ValueError("a whole number, e.g. 60 or 8k")
        return int(float(m.group(1).replace(",", ".")) * SUFFIXES[m.group(2)])
    if spec.type == "number":
        return float(low.replace(",", "."))
    if spec.type == "bool":
        if low in ("yes", "ja", "true", "y", "j", "1", "on"):
            return True
        if low in ("no", "nein", "false", "n", "0", "off"):
            return False
        raise ValueError("yes or no")
    if spec.type == "enum" and spec.choices:
        allowed = [replies.choice_text(c) for c in spec.choices] + ["unknown"]
        if low in allowed:
            return low
        said = next((value for value, pattern in words if re.fullmatch(rf"\s*(?:{pattern})\s*", low)), None)
        if said is not None:
            return replies.choice_text(said)
        raise ValueError(" | ".join(allowed))
    return raw


class ChatSession:
    """One consultation as a chat: answers, explanations, evidence, commands, and its transcript."""

    def __init__(
        self,
        engine: Engine,
        lang: str = "en",
        recorder_factory: RecorderFactory | None = None,
        forced_lang: bool = False,
    ) -> None:
        from advisor.chat.reading import Turn

        self.engine = engine
        self.lang = lang if lang in LANGS else "en"
        self.forced_lang = forced_lang  # chosen with --lang, F6 or /lang: the customer's words do not switch it
        self.pending: dict[str, Any] = {}  # values said outside their usual range, until confirmed
        self.last_request: str | None = None  # the last request answered ("and the same for sglang?")
        self.turn = Turn("answer")
        self.recorder_factory = recorder_factory
        self.recorder: Any = None
        self.c = Consultation(engine, self.lang)
        self.question: Question | None = None
        self.asked: list[Asked] = []
        self.origins: dict[str, str] = {}
        self.offered: list[str] = []
        self.settled_announced = False
        self.transcript_note: str | None = None
        self._names = tuple(
            dict.fromkeys([m.name for m in engine.kb.models.values()] + [g.name for g in engine.kb.gpus.values()])
        )

    # --- turns -----------------------------------------------------------------------------------

    def opening(self) -> Reply:
        """The welcome and the first question (not recorded: nothing was said yet)."""
        self._next()
        text = t("welcome", self.lang)
        if self.question is not None:
            text += "\n\n" + replies.question_text(self.question, self.lang)
        return self._reply("", text, "opening", record=False)

    def respond(self, text: str) -> Reply:
        """Answer one line (or a pasted block); the turn is recorded before this returns."""
        from advisor.chat.reading import read

        said = text.strip()
        turn = read(said, self.engine.kb, self.question.fact if self.question else None)
        if turn.act not in ("command", "quit", "evidence"):
            self._follow_language(said)
        self.turn = turn
        if self.pending and turn.act not in ("command", "quit"):
            reply = self._confirm(said, turn)
        elif self.offered and turn.act not in ("command", "quit", "evidence") and self._picked(said) is not None:
            reply = self._answer(said)
        else:
            reply = getattr(self, ROUTES.get(turn.act, "_answer"))(said)
        if turn.act.startswith("request_"):
            self.last_request = turn.act
        self._record(reply)
        return reply

    def _repeat(self, said: str) -> Reply:
        """ "And the same for sglang?": the last request again with this line's values, or a what-if."""
        if self.last_request:
            from advisor.chat.reading import Turn

            self.turn = Turn(self.last_request, self.turn.rest, self.turn.got)
            return getattr(self, ROUTES[self.last_request])(said)
        return self._what_if(said)

    def _follow_language(self, said: str) -> None:
        """Answer in the customer's language where a line says it clearly, unless it was chosen."""
        from advisor.inputs.acts import language

        if self.forced_lang:
            return
        lang = language(said, self.lang)
        if lang != self.lang and lang in LANGS:
            self.set_lang(lang)

    def _quit(self, said: str) -> Reply:
        return self._reply(said, t("bye", self.lang), "command", action="quit", record=False)

    def _picked(self, said: str) -> str | None:
        """The offered name a reply picks: its number, a yes (the first), or the words only it has."""
        m = re.fullmatch(r"(\d)[.)]?", said.strip())
        if m and 1 <= int(m.group(1)) <= len(self.offered):
            return self.offered[int(m.group(1)) - 1]
        if YES.match(said):
            return self.offered[0]
        from advisor.inputs.entities import NEGATION

        low = said.lower().replace("-", " ")
        words = {
            m.group(0)
            for m in re.finditer(r"[a-z0-9äöüß]+", low)
            if not NEGATION.search(low[max(0, m.start() - 40) : m.start()])
        }  # "the pcie ones, not nvl": the NVL is ruled out, not picked
        own = [set(re.findall(r"[a-z0-9äöüß]+", n.lower().replace("-", " "))) for n in self.offered]
        common = set.intersection(*own) if own else set()
        words = {w for w in words if len(w) > 2}  # "q" is no pick of "Max-Q": it quits
        hits = [n for n, w in zip(self.offered, own, strict=True) if (w - common) & words]
        return hits[0] if len(hits) == 1 else None

    def _answer(self, said: str) -> Reply:
        """An answer or a correction: the facts it names are taken (a value outside its usual range, or a
        card of a family whose variants differ, is asked back first), then the result and the next question."""
        c = self.c
        typed = said
        if self.offered:
            typed = self._picked(said) or said
        self.offered = []
        asked = self.question
        before, planning = c.rec, c.planning
        got = c.answer(typed, self.turn.got if typed == said else None)
        for path in got.fields:
            if path in c.fields:
                self.origins[path] = "you"
        parts = self._understood(said, got, asked)
        if c.planning and not planning:
            parts.append(t("planning_noted", self.lang))
        asking = []
        if got.held:
            self.pending = dict(got.held)
            asking.append(self._confirm_text(got.held, got.held_why))
        elif len(got.variants) > 1 and not c.error:
            asking.append(self._variant_text(got.variants, got.gpu_name.name.upper() if got.gpu_name else ""))
        parts += self._after(before, moved=bool(got.fields) and not c.error, ask=not (self.pending or self.offered))
        parts += asking
        return self._reply(said, "\n\n".join(parts), "answer", understood=dict(got.fields))

    def _understood(self, said: str, got: Understood, asked: Question | None) -> list[str]:
        """What an answer was read as: the facts noted, the engine's refusal, a word that is no choice,
        the range read, the names it may mean, a skip; or that nothing could be read."""
        c, lang = self.c, self.lang
        parts: list[str] = []
        if got.fields and not c.error:
            parts.append(replies.noted_text(got.fields, lang))
        if c.error:
            parts.append(f"⚠ **{t('error', lang)}:** {c.error}")
        if got.invalid is not None and asked is not None:
            choices = replies.choices_text(asked.fact, asked.choices, lang)
            fact = fact_label(asked.fact, lang)
            parts.append(f"⚠ {t('not_a_choice', lang, value=got.invalid, fact=fact, choices=choices)}")
        parts += [self._ranged_text(path, values, got.fields[path]) for path, values in got.ranged.items()]
        return parts + self._unread(said, got, asked)

    def _unread(self, said: str, got: Understood, asked: Question | None) -> list[str]:
        """The names a word may mean, a skip, or that nothing could be read (a question the knowledge
        base answers aside)."""
        c, lang = self.c, self.lang
        parts: list[str] = []
        unsure = got.unsure.get("model") or got.unsure.get("gpu") or got.unsure.get("precision")
        if unsure:
            self.offered = list(unsure)
            names = f" {t('or', lang)} ".join(f"**{n}**" for n in self.offered)
            numbers = "1" if len(self.offered) == 1 else f"1–{len(self.offered)}"
            parts.append(t("did_you_mean", lang, names=names, numbers=numbers))
        if got.skipped and asked is not None:
            key = "cannot_skip" if asked.fact in REQUIRED else "skipped"
            parts.append(t(key, lang, fact=fact_label(asked.fact, lang)))
        if not (got.fields or got.unsure or got.skipped or c.error or got.held) and got.invalid is None:
            known = replies.knowledge_answer(said, self.engine.kb, lang)
            fallback = t("not_understood", lang, question=asked.text) if asked else t("not_understood_free", lang)
            parts.append(known if known is not None else fallback)
        return parts

    def _ranged_text(self, path: str, values: tuple[int, ...], taken: Any) -> str:
        fact = FACT_OF_PATH.get(path, path)
        shown = ", ".join(format_value(v, self.lang) for v in values)
        return t(
            "ranged", self.lang, fact=fact_label(fact, self.lang), values=shown, value=format_value(taken, self.lang)
        )

    def _confirm_text(self, held: dict[str, Any], why: dict[str, str] | None = None) -> str:
        """The question that confirms a value said outside its usual range (or in bytes per second)."""
        table = field_table(self.engine.kb.root).by_path()
        lines = []
        for path, value in held.items():
            low, high = table[path].usual or (0, 0)
            fact = FACT_OF_PATH.get(path, path)
            if (why or {}).get(path) == "bytes":
                shown = format_value(value, self.lang)
                lines.append(t("confirm_bytes", self.lang, value=shown, bits=format_value(value * 8, self.lang)))
                continue
            refused = (why or {}).get(path)
            if refused:  # refused as said: the card's own value proposed
                shown, said = format_value(value, self.lang), fact_label(fact, self.lang)
                lines.append(t("confirm_catalogue", self.lang, why=refused, fact=said, value=shown))
                continue
            lines.append(
                t(
                    "confirm_value",
                    self.lang,
                    fact=fact_label(fact, self.lang),
                    value=format_value(value, self.lang),
                    low=format_value(int(low), self.lang),
                    high=format_value(int(high), self.lang),
                )
            )
        return "\n\n".join(lines)

    def _confirm(self, said: str, turn: Any) -> Reply:
        """The reply to a confirming question: yes takes the values held, anything else drops them and
        is read as a line of its own."""
        held, self.pending = self.pending, {}
        if not YES.match(said):
            if NO.match(said):
                parts = [t("confirm_dropped", self.lang), *self._after(self.c.rec)]
                return self._reply(said, "\n\n".join(parts), "answer")
            return getattr(self, ROUTES.get(turn.act, "_answer"))(said)
        before = self.c.rec
        taken: dict[str, Any] = {}
        problems = []
        for path, value in held.items():
            error = self.c.set(path, value)
            if error:
                problems.append(f"⚠ **{t('error', self.lang)}:** {error}")
            else:
                taken[path] = value
                self.origins[path] = "you"
        parts = [replies.noted_text(taken, self.lang)] if taken else []
        parts += [*problems, *self._after(before, moved=bool(taken))]
        return self._reply(said, "\n\n".join(parts), "answer", understood=taken)

    def _variant_text(self, ids: tuple[str, ...], family: str) -> str:
        """Which card of a family was meant, asked where the variants give different answers (or before
        there is an answer to compare), else said as taken."""
        kb, lang = self.engine.kb, self.lang
        names = [kb.gpus[i].name for i in ids]
        family = family or names[0]
        if self.c.rec is not None:
            others = [n for n in names[1:]]
            if self.c.value("hardware.gpu", others) <= 0:
                return t("variant_same", lang, taken=f"**{names[0]}**", family=family, others=", ".join(others))
        self.offered = names
        shown = f" {t('or', lang)} ".join(f"**{n}**" for n in names)
        return t("variant_question", lang, family=family, names=shown, numbers=f"1–{len(names)}")

    def _after(self, before: Recommendation | None, moved: bool = False, ask: bool = True) -> list[str]:
        """After a turn: when a fact changed (`moved`), the result now and what changed; the whole
        recommendation when its layout or warnings changed; then the next question or, once settled,
        what was assumed."""
        c, lang = self.c, self.lang
        parts: list[str] = []
        self._next()
        rec = c.rec
        changed = rec is not None and outcome(rec) != outcome(before)
        if rec is not None and moved and before is not None:
            parts.append(replies.result_change(before, rec, lang))
        if rec is not None and c.host and (moved or changed):
            parts.append(replies.host_text(c.host, self._notes(), lang))
        if self.question is not None:
            self.settled_announced = False
            if rec is not None and changed:
                parts.append(replies.recommendation_brief(rec, replies.footnotes(rec, self.engine.kb)))
            if ask:
                parts.append(replies.question_text(self.question, lang))
        elif rec is not None:
            if changed or not self.settled_announced:
                parts.append(replies.recommendation_brief(rec, replies.footnotes(rec, self.engine.kb)))
            parts.append(t("settled", lang))
            parts.append(replies.still_open_text(c.still_open(), lang))
            self.settled_announced = True
        elif not c.ready():
            parts.append(t("no_rec", lang))
        return parts

    def _next(self) -> None:
        q = self.c.next_question()
        self.question = q
        if q is None:
            return
        snapshot = Asked(q, dict(self.c.fields), frozenset(self.c.skipped))
        if not self.asked or (self.asked[-1].question.fact, self.asked[-1].fields) != (q.fact, snapshot.fields):
            self.asked.append(snapshot)

    # --- explanations ----------------------------------------------------------------------------

    def _why(self, said: str) -> Reply:
        c, lang = self.c, self.lang
        if replies.knowledge_answer(said, self.engine.kb, lang) is not None:
            return self._concept(said)  # "why does ACS matter?": the knowledge base answers it
        q = self.question
        if q is None:
            if c.rec is None:
                return self._reply(said, t("why_nothing", lang), "why")
            return self._reply(said, replies.why_recommendation(c.rec, replies.footnotes(c.rec, self.engine.kb)), "why")
        lines = c.why(q.fact)
        if not lines:
            text = f"**{t('why_head', lang, fact=fact_label(q.fact, lang))}**\n\n" + t(
                "why_required", lang, fact=fact_label(q.fact, lang)
            )
        else:
            text = replies.why_text(
                q.fact,
                lines,
                [rid for rid, _ in lines if rid in self.engine.rules.rules],
                self.engine.rules.rules,
                lang,
            )
        return self._reply(said, text + "\n\n" + replies.question_text(q, lang), "why")

    def _how(self, said: str) -> Reply:
        c = self.c
        if c.rec is None:
            return self._reply(said, t("how_none", self.lang), "how")
        notes = replies.footnotes(c.rec, self.engine.kb)
        return self._reply(said, replies.how_text(c.how(), notes, self.lang), "how")

    def _total(self) -> tuple[int, int]:
        c = self.c
        if c.rec is not None:
            return c.rec.machine.total_gpus, c.rec.machine.gpus_per_node
        per = int(c.fields.get("hardware.gpus_per_node", 1))
        return per * int(c.fields.get("hardware.nodes", 1)), per

    def _why_not(self, said: str, arg: str | None = None) -> Reply:
        c, lang = self.c, self.lang
        arg = self.turn.rest if arg is None else arg
        if c.rec is None:
            return self._reply(said, t("no_rec", lang), "why_not")
        total, per_node = self._total()
        try:
            check_layout_text(arg, MAX_LAYOUT_GPUS, "layout")
            layout = read_layout(arg, total, per_node)
            model = self.engine.kb.models.get(str(c.rec.input.get("model_id")))
            if layout is not None:
                check_layout(layout.replicas, layout.tp, layout.pp, layout.ep, model, MAX_LAYOUT_GPUS, "layout")
        except AdvisorError as exc:
            return self._reply(said, f"⚠ {exc.one_line()}", "why_not")
        if layout is None:
            return self._reply(said, t("why_not_unreadable", lang, text=arg), "why_not")
        if layout.gpus > total:
            return self._reply(
                said, t("why_not_too_many", lang, layout=layout.label(), need=layout.gpus, have=total), "why_not"
            )
        try:
            trial = c.why_not(layout)
        except AdvisorError as exc:
            return self._reply(said, f"⚠ {exc.one_line()}", "why_not")
        assert trial is not None
        notes = replies.footnotes(c.rec, self.engine.kb)
        text = replies.why_not_text(layout, c.rec, trial, notes)
        return self._reply(said, text, "why_not", notes=list(notes.items))

    def _what_if(self, said: str) -> Reply:
        """A change supposed, wherever its cue stands ("hm, and if we capped it at 32k?"): the result
        with it beside the result now; nothing is kept."""
        c, lang = self.c, self.lang
        if c.rec is None:
            got = self.turn.got
            tried = dict(got.fields) if got is not None else {}
            text = t("what_if_later", lang, facts=replies.fields_text(tried, lang)) if tried else t("no_rec", lang)
            return self._reply(said, text, "what_if", understood=tried)
        before, after, changed, error = c.what_if(said)
        if not changed:
            shown = self.turn.rest if self.turn.act == "hypothetical" and self.turn.rest else said
            return self._reply(said, t("what_if_unreadable", lang, text=shown), "what_if")
        if after is None:
            return self._reply(said, t("what_if_failed", lang, error=error), "what_if", understood=dict(changed))
        return self._reply(
            said, replies.what_if_text(changed, before, after, lang), "what_if", understood=dict(changed)
        )

    # --- acts that change no fact ----------------------------------------------------------------

    def _compare(self, said: str) -> Reply:
        """Two or more values of one fact ("fp8 or bf16?"), each tried on the facts so far."""
        from advisor.chat.requests import compare_text

        c, lang = self.c, self.lang
        got = self.turn.got
        if c.rec is None or got is None:
            return self._reply(said, t("no_rec", lang), "compare")
        parts = []
        for path, values in got.alternatives.items():
            fact = FACT_OF_PATH.get(path, path)
            parts.append(compare_text(self.engine, c.fields, path, fact, values, c.evaluate, lang))
        if self.question is not None:
            parts.append(replies.question_text(self.question, lang))
        return self._reply(said, "\n\n".join(parts), "compare")

    def _concept(self, said: str) -> Reply:
        """A question about the domain, answered from the knowledge base with its sources; a question
        it holds no answer to is said to be one, and changes nothing."""
        lang = self.lang
        known = replies.knowledge_answer(said, self.engine.kb, lang)
        parts = [known if known is not None else t("question_unread", lang)]
        if self.question is not None:
            parts.append(replies.question_text(self.question, lang))
        return self._reply(said, "\n\n".join(parts), "concept")

    def _dont_know(self, said: str) -> Reply:
        """The customer does not know: the open question is left to its default (where it may be)."""
        c, lang = self.c, self.lang
        asked = self.question
        if asked is None:
            return self._reply(said, t("not_understood_free", lang), "answer")
        if asked.fact in REQUIRED:
            return self._reply(said, t("cannot_skip", lang, fact=fact_label(asked.fact, lang)), "answer")
        c.skipped.add(asked.fact)
        parts = [t("skipped", lang, fact=fact_label(asked.fact, lang))]
        settle = self.engine.kb.facts[asked.fact].settle
        if said.rstrip().endswith("?") and settle:  # "keine ahnung, wie prüf ich das?": how to find out
            parts.append(t("how_to_find_out", lang, how=settle.get(lang)))
        parts += self._after(c.rec)
        return self._reply(said, "\n\n".join(parts), "answer")

    def _take(self, said: str, keep: Callable[[str], bool] = lambda path: True) -> dict[str, Any]:
        """The facts a request states besides asking ("what to order for 200 users"), taken; `keep`
        chooses which ("the vllm command for one node" names the engine, and scopes, not counts, nodes)."""
        got = self.turn.got
        if got is None or not got.fields:
            return {}
        taken = {}
        for path, value in got.fields.items():
            if keep(path) and not self.c.set(path, value):
                taken[path] = value
                self.origins[path] = "you"
        return taken

    def _request_command(self, said: str) -> Reply:
        from advisor.chat.requests import command_text

        known = set(self.c.fields)
        named = ("model", "precision", "hardware.gpu", "hardware.gpus_per_node")  # taken where none is known yet
        taken = self._take(said, keep=lambda path: path == "engine" or path in named and path not in known)
        engine = taken.get("engine") or (self.turn.got.fields.get("engine") if self.turn.got else None)
        text = command_text(self.c.rec, str(engine) if engine else None, self.lang)
        parts = ([replies.noted_text(taken, self.lang)] if taken else []) + [text]
        return self._reply(said, "\n\n".join(parts), "request", understood=taken)

    def _request_buy(self, said: str) -> Reply:
        from advisor.chat.requests import buy_text

        taken = self._take(said)
        parts = ([replies.noted_text(taken, self.lang)] if taken else []) + [
            buy_text(self.engine, self.c.raw(), self.lang)
        ]
        return self._reply(said, "\n\n".join(parts), "request", understood=taken)

    def _request_save(self, said: str) -> Reply:
        return self._reply(said, self.save(), "command", record=False)

    def _out_of_scope(self, said: str) -> Reply:
        from advisor.chat.requests import scope_text

        parts = [scope_text(self.lang)]
        if self.question is not None:
            parts.append(replies.question_text(self.question, self.lang))
        return self._reply(said, "\n\n".join(parts), "scope")

    def _smalltalk(self, said: str) -> Reply:
        parts = [t("smalltalk", self.lang)]
        if self.question is not None:
            parts.append(replies.question_text(self.question, self.lang))
        return self._reply(said, "\n\n".join(parts), "smalltalk")

    # --- evidence ----------------------------------------------------------------------------------

    def _evidence(self, said: str) -> Reply:
        """Pasted machine output: a topology matrix is taken as the host's facts; anything else an
        audit reader knows is audited as `advisor audit` would audit the same text in a file."""
        from advisor.inputs.evidence.topo import looks_like_topo

        if "\n" in said and looks_like_topo(said):
            return self._topo(said)
        import tempfile

        from advisor.audit import audit

        lang = self.lang
        with tempfile.TemporaryDirectory(prefix="advisor-paste-") as folder:
            path = Path(folder) / "pasted.txt"
            path.write_text(said + "\n", encoding="utf-8")
            try:
                result = audit(self.engine, [path], lang)
            except AdvisorError as exc:
                return self._reply(said, f"⚠ {exc.one_line()}".replace(str(path), t("pasted", lang)), "evidence")
            text = replies.audit_text(result, t("pasted", lang), lang).replace(str(path), t("pasted", lang))
        before = self.c.rec
        taken, problems = self._take_evidence(dict(result.replay.get("scenario") or {}))
        taken.update(self._take_caption(said, taken))
        if "hardware.gpu" in taken:
            self.offered = []  # the output names the card: no variant is left to pick
        parts = [text, *problems]
        if taken:
            parts.append(t("evidence_taken", lang, facts=replies.fields_text(taken, lang)))
            parts += self._after(before, moved=True)
        elif self.question is not None:
            parts.append(replies.question_text(self.question, lang))
        return self._reply(said, "\n\n".join(parts), "evidence", understood=taken)

    def _take_caption(self, said: str, shown: dict[str, Any]) -> dict[str, Any]:
        """What the customer's words above a paste state, where neither the paste nor the consultation
        has a value yet: the words fill gaps, never override what the output or an answer gave."""
        from advisor.chat.reading import caption
        from advisor.inputs.freetext import understand

        words = caption(said)
        if not words:
            return {}
        got = understand(words, self.engine.kb)
        taken: dict[str, Any] = {}
        for path, value in got.fields.items():
            if path in shown:
                continue
            if path in self.c.fields:
                if self.c.fields[path] == value:
                    taken[path] = value  # said again: no change
                continue
            if not self.c.set(path, value):
                taken[path] = value
                self.origins[path] = "you"
        return taken

    def _take_evidence(self, raw: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """The consultation's facts that pasted evidence shows (the GPU, its count, the model, the
        host's settings), each taken unless the engine refuses it."""
        wanted: dict[str, Any] = {}
        for key, value in raw.items():
            if isinstance(value, dict):
                wanted.update({f"{key}.{k}": v for k, v in value.items() if f"{key}.{k}" in FACT_OF_PATH})
            elif key in FACT_OF_PATH:
                wanted[key] = value
        taken: dict[str, Any] = {}
        problems = []
        if isinstance(wanted.get("model"), str) and "precision" not in wanted:
            from advisor.inputs.freetext import understand

            named = understand(str(wanted["model"]).replace("/", " "), self.engine.kb).fields
            if named.get("precision"):  # "Qwen2.5-72B-Instruct-AWQ": its weights are int4
                wanted["precision"] = named["precision"]
            wanted["model"] = named.get("model") or wanted["model"]
        for path, value in wanted.items():
            value = self._catalogue(path, value)
            if value is not None and self.c.fields.get(path) == value:
                taken[path] = value  # shown again: no change, but what the output shows
                continue
            if value is None:
                continue
            error = self.c.set(path, value)
            if error:
                problems.append(f"⚠ {fact_label(FACT_OF_PATH[path], self.lang)} = {value}: {error}")
            else:
                taken[path] = value
                self.origins[path] = "evidence"
        return taken, problems

    def _catalogue(self, path: str, value: Any) -> Any:
        """A value evidence shows, in the consultation's terms: a model or GPU in the catalogue's words
        (a HF repo as the model's name), a number of a number field as a number ('8192')."""
        row = field_table(self.engine.kb.root).by_path().get(path)
        if row is not None and row.type in ("count", "tokens") and isinstance(value, str) and value.isdigit():
            return int(value)
        if row is not None and row.type in ("share", "gbps") and isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                return value
        try:
            if path == "model":
                return self.engine.kb.find_model(str(value)).name
            if path == "hardware.gpu":
                return self.engine.kb.find_gpu(str(value)).name
        except AdvisorError:  # a name cut short ("RTX 6000 Ada Gene..."): read as a customer's words are
            from advisor.inputs import entities

            kind = "model" if path == "model" else "gpu"
            found = entities.find(self.engine.kb, kind, entities.spaced(str(value)))
            if found is None:
                return value
            return self.engine.kb.models[found.id].name if kind == "model" else self.engine.kb.gpus[found.id].name
        return value

    def _topo(self, said: str) -> Reply:
        """A pasted `nvidia-smi topo -m`, read by the audit's readers: every hardware fact it shows is
        taken (GPU count, NVLink, peer-to-peer over NVLink), and the topology is kept, so the layout is
        judged on its paths (slow paths, grouping) from now on."""
        from advisor.audit import derive
        from advisor.inputs.evidence.topo import parse_topo

        lang = self.lang
        parsed = parse_topo(said, "pasted")
        gpus = parsed.data.get("gpus") or []
        if not gpus or not parsed.data.get("paths"):
            return self._reply(said, t("topo_unreadable", lang) + "".join(f"\n- {n}" for n in parsed.notes), "topo")
        before = self.c.rec
        evidence, raw, dep = derive([parsed], self.engine)
        wanted = {f"hardware.{k}": v for k, v in (raw.get("hardware") or {}).items() if f"hardware.{k}" in FACT_OF_PATH}
        taken: dict[str, Any] = {}
        problems = []
        for path, value in wanted.items():
            error = self.c.set(path, value)
            if error:
                problems.append(f"⚠ {fact_label(FACT_OF_PATH[path], lang)} = {value}: {error}")
            else:
                taken[path] = value
                self.origins[path] = "topo"
        self.c.take_evidence(evidence, dep.get("topology") or {})
        parts = [
            replies.topo_text(parsed.data, parsed.notes, taken, lang),
            *problems,
            *self._after(before, moved=True),
        ]
        return self._reply(said, "\n\n".join(parts), "topo", understood=taken)

    def _audit(self, said: str, arg: str) -> Reply:
        lang = self.lang
        if not arg:
            return self._reply(said, t("audit_usage", lang), "audit")
        path = Path(arg).expanduser()
        if not path.exists():
            return self._reply(said, t("audit_missing", lang, path=f"`{arg}`"), "audit")
        from advisor.audit import audit

        try:
            result = audit(self.engine, [path], lang)
        except AdvisorError as exc:
            return self._reply(said, f"⚠ {exc.one_line()}", "audit")
        return self._reply(said, replies.audit_text(result, arg, lang), "audit")

    # --- commands ----------------------------------------------------------------------------------

    def _command(self, said: str) -> Reply:
        lang = self.lang
        word, _, arg = said.partition(" ")
        word, arg = word.lower(), arg.strip()
        if word in ("/quit", "/exit"):
            return self._reply(said, t("bye", lang), "command", action="quit", record=False)
        if word == "/help":
            return self._reply(said, "", "command", action="help", record=False)
        if word == "/lang":
            if arg not in LANGS:
                return self._reply(said, t("lang_usage", lang), "command")
            self.set_lang(arg)
            self.forced_lang = True
            text = t("lang_set", arg)
            if self.question is not None:
                text += "\n\n" + replies.question_text(self.question, arg)
            return self._reply(said, text, "command", action="lang")
        if word == "/sources":
            if self.c.rec is None:
                return self._reply(
                    said, replies.all_sources_text(self.engine.kb, lang), "command", action="tab:sources"
                )
            notes = replies.footnotes(self.c.rec, self.engine.kb)
            return self._reply(said, replies.sources_text(notes, lang), "command", action="tab:sources")
        if word == "/rules":
            return self._reply(said, replies.rules_text(self.engine.rules.rules, lang), "command")
        if word == "/save":
            return self._reply(said, self.save(), "command", record=False)
        if word == "/new":
            saved = self.save(quiet=True)
            self.reset()
            opening = self.opening()
            text = "\n\n".join(x for x in (saved, t("new_session", self.lang), opening.text) if x)
            return self._reply(said, text, "command", action="new", record=False)
        if word == "/report":
            if self.c.rec is None:
                return self._reply(said, t("no_report", lang), "command")
            from advisor.render.markdown import recommendation

            return self._reply(
                said, "", "command", action="report", record=False, report=recommendation(self.c.rec, self.engine.kb)
            )
        if word == "/audit":
            return self._audit(said, arg)
        if word == "/set":
            return self._set(said, arg)
        return self._reply(
            said,
            t("unknown_command", lang, command=word, commands=", ".join(f"`{c}`" for c in COMMANDS)),
            "command",
            record=False,
        )

    def _set(self, said: str, arg: str) -> Reply:
        c, lang = self.c, self.lang
        name, _, value_text = arg.partition(" ")
        if not name or not value_text.strip():
            return self._reply(said, t("set_usage", lang), "command")
        fact = self._fact_named(name)
        if fact is None:
            return self._reply(said, t("set_unknown", lang, fact=name, facts=", ".join(PANEL_FACTS)), "command")
        path = PATHS[fact]
        spec = self.engine.kb.facts[fact]
        try:
            row = field_table(self.engine.kb.root).by_fact().get(fact)
            value = _to_value(spec, value_text, row.values if row else ())
        except ValueError as exc:
            return self._reply(
                said, t("set_bad", lang, value=value_text.strip(), fact=fact_label(fact, lang), error=exc), "command"
            )
        old = c.fields.get(path, c.assumed().get(fact))
        before = c.rec
        error = self.c.set(path, value)
        if error:
            text = t("set_bad", lang, value=value_text.strip(), fact=fact_label(fact, lang), error=error)
            return self._reply(said, text, "command")
        self.origins[path] = "edit"
        parts = [
            t(
                "set_done",
                lang,
                fact=fact_label(fact, lang),
                old=format_value(old, lang),
                new=format_value(value, lang),
            ),
            *self._after(before, moved=True),
        ]
        return self._reply(said, "\n\n".join(parts), "set", understood={path: value})

    def _fact_named(self, name: str) -> str | None:
        low = name.lower()
        if low in PATHS:
            return low
        if low in FACT_OF_PATH:
            return FACT_OF_PATH[low]
        for fact in PATHS:
            if fact_label(fact, "en").lower() == low or fact_label(fact, "de").lower() == low:
                return fact
        return None

    # --- session -----------------------------------------------------------------------------------

    def set_lang(self, lang: str) -> None:
        """Answer in `lang` from now on: the recommendation and the question are rebuilt in it."""
        self.lang = lang
        self.c.set_lang(lang)
        self._next()

    def reset(self) -> None:
        """Forget the consultation; keep the language."""
        self.c = Consultation(self.engine, self.lang)
        self.question = None
        self.asked = []
        self.origins = {}
        self.offered = []
        self.pending = {}
        self.settled_announced = False

    def _record(self, reply: Reply) -> None:
        if not reply.record or self.recorder_factory is None:
            return
        if self.recorder is None:
            self.recorder = self.recorder_factory(self.engine, self.lang)
            if self.recorder is None:
                return
        notes = cited(reply.text, reply.notes, self.engine.kb)
        self.recorder.turn(
            reply.said, reply.text + (f"\n\n{notes}" if notes else ""), self.c.rec, reply.understood, markdown=True
        )
        failed = getattr(self.recorder, "failed", None)
        if failed and failed != self.transcript_note:
            self.transcript_note = failed
            reply.text += "\n\n" + t("transcript_failed", self.lang, message=failed)

    def save(self, quiet: bool = False) -> str:
        """Close the transcript and write its final files; the next turn starts a new one."""
        lang = self.lang
        if self.recorder_factory is None:
            return "" if quiet else t("not_recording", lang)
        if self.recorder is None:
            return "" if quiet else t("nothing_to_save", lang)
        recorder, self.recorder = self.recorder, None
        paths = recorder.close(self.c.rec)
        if paths:
            return t("saved", lang, md=paths[0], json=paths[1])
        failed = getattr(recorder, "failed", None)
        return t("transcript_failed", lang, message=failed) if failed else ""

    def close(self) -> str:
        """End the session: close the transcript if anything was said."""
        return self.save(quiet=True)

    # --- snapshots ---------------------------------------------------------------------------------

    def facts(self) -> list[FactRow]:
        """The facts panel: what the user gave (or edited, or the topology showed), then what was assumed."""
        c, lang = self.c, self.lang
        assumed = c.assumed()
        rows = []
        for fact in PANEL_FACTS:
            path = PATHS.get(fact)
            if path is None:
                continue
            if path in c.fields:
                value, origin = c.fields[path], t(f"origin_{self.origins.get(path, 'you')}", lang)
            elif fact in assumed:
                value, origin = assumed[fact], t("origin_assumed", lang)
            else:
                continue
            rows.append(
                FactRow(path, fact, fact_label(fact, lang), value, replies.value_text(fact, value, lang), origin)
            )
        return rows

    def suggestions(self) -> tuple[str, ...]:
        """What the input offers to complete: the offered names, the question's choices, names, commands."""
        lang = self.lang
        words = [t(f"word_{w}", lang) for w in ("why", "how", "why_not", "what_if", "skip")]
        q = self.question
        choices = [choice_label(q.fact, ch, lang) for ch in q.choices] if q else []
        return tuple(
            dict.fromkeys(
                [
                    *self.offered,
                    *choices,
                    *self._names,
                    *words,
                    "/lang de",
                    "/lang en",
                    *(c for c in COMMANDS if c != "/lang"),
                ]
            )
        )

    def _notes(self) -> replies.Footnotes:
        """The recommendation's footnotes, then those of the findings on a pasted topology."""
        assert self.c.rec is not None
        notes = replies.footnotes(self.c.rec, self.engine.kb)
        for f in self.c.host:
            for cite in f.sources:
                notes.ref(cite)
        return notes

    def _reply(self, said: str, text: str, kind: str, notes: list[Citation] | None = None, **extra: Any) -> Reply:
        rec = self.c.rec
        if notes is None:
            notes = self._notes().items if rec is not None else []
        return Reply(
            said=said,
            text=text,
            kind=kind,
            lang=self.lang,
            rec=rec,
            question=self.question,
            facts=self.facts(),
            notes=list(notes),
            suggestions=self.suggestions(),
            **extra,
        )
