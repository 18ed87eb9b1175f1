"""The chat's answers to requests and to acts that change no fact: the launch command, what to buy,
a comparison of two values, a concept, a scope statement, small talk. Every figure comes from the
engine's records (the recommendation, `advisor size`); this module only renders them."""

from __future__ import annotations

from typing import Any

from advisor.chat.strings import choice_label, fact_label, t
from advisor.core.engine import Engine
from advisor.core.records import Recommendation


def command_text(rec: Recommendation | None, engine_name: str | None, lang: str) -> str:
    """The recommendation's launch lines, for the engine named (or every engine), ready to paste."""
    if rec is None:
        return t("command_none", lang)
    launch = dict(rec.launch)
    if engine_name and engine_name in launch:
        launch = {engine_name: launch[engine_name]}
    if not launch:
        return t("command_no_layout", lang)
    layout = rec.layout.label() if rec.layout else "—"
    out = [t("command_head", lang, layout=layout)]
    for name, cmd in launch.items():
        out += [f"{name}:", "```sh", cmd, "```"]
    return "\n".join(out)


def buy_text(engine: Engine, raw: dict[str, Any], lang: str) -> str:
    """What to order for the model and workload stated: `advisor size` over the catalogue's platforms
    (the card stated, if any), the smallest that serves the users, and the purchase advice."""
    from advisor.errors import AdvisorError
    from advisor.size import size

    if not raw.get("model"):
        return t("buy_needs_model", lang)
    hardware = {k: v for k, v in (raw.get("hardware") or {}).items() if k == "gpu"}
    try:
        result = size(engine, {**raw, "hardware": hardware}, lang=lang, where="chat")
    except AdvisorError as exc:
        if hardware:  # no platform of that card: every card of the catalogue
            return buy_text(engine, {**raw, "hardware": {}}, lang)
        return f"⚠ {exc.one_line()}"
    out = []
    best = result.smallest
    if best is None:
        out.append(t("buy_none", lang))
    else:
        layout = best.rec.layout.label() if best.rec.layout else "—"
        held = best.rec.figures.get("conversations")
        out.append(
            t(
                "buy_smallest",
                lang,
                platform=best.platform.name,
                gpus=best.gpus,
                layout=layout,
                held="—" if held is None else f"{int(held):,}".replace(",", "." if lang == "de" else ","),
            )
        )
    out += [f"- **{f.title}** {f.explanation}" for f in result.purchase]
    out.append(t("buy_more", lang))
    return "\n\n".join(out)


def compare_text(
    engine: Engine, fields: dict[str, Any], path: str, fact: str, values: tuple[Any, ...], evaluate: Any, lang: str
) -> str:
    """Each value of one fact tried on the facts so far, side by side: layout and figures."""
    from advisor.chat.consult import figure_text, figures
    from advisor.errors import AdvisorError

    out = [t("compare_head", lang, fact=fact_label(fact, lang))]
    for value in values:
        try:
            rec = evaluate({**fields, path: value})
        except AdvisorError as exc:
            out.append(f"- **{choice_label(fact, value, lang)}**: ⚠ {exc.one_line()}")
            continue
        layout = rec.layout.label() if rec.layout else "—"
        shown = " · ".join([layout, *(figure_text(k, v, lang) for k, v in figures(rec).items())])
        warned = [f.rule for f in rec.findings if f.severity in ("warning", "error")]
        out.append(f"- **{choice_label(fact, value, lang)}**: {shown}" + (f" ({', '.join(warned)})" if warned else ""))
    out.append(t("compare_kept", lang))
    return "\n".join(out)


def scope_text(lang: str) -> str:
    """What the advisor covers, for a request outside it."""
    return t("out_of_scope", lang)
