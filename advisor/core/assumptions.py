"""Which unstated inputs change the answer: the scenario evaluated again with the other plausible
values of each input fact the user did not give, and the answer under each.

Guarantees: only input facts whose state is default, or unknown with a working value (optional
hardware: an NVLink bridge), are tried, in the order of PROBED and with their plausible values; at
most MAX_EVALUATIONS evaluations per recommendation; a fact is listed only when another value
changes what the user is told (`answer_key`: the chosen layout, and the findings that advise, warn
or refuse); each branch names its layout, the first contract figure that differs and the findings
that come or go.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from advisor.core.facts import DOMAIN_SIZES, optional_hardware
from advisor.core.records import Assumption, Branch, Recommendation
from advisor.errors import AdvisorError
from advisor.i18n import LANGS, Message, Text, label, label_text
from advisor.inputs.fields import field_table
from advisor.inputs.scenario import Scenario
from advisor.kb.knowledge import Knowledge
from advisor.structs import replace

# The facts tried, most telling first. Others are not: a user states them (model, GPU, users), they
# are settled on the host and asked as unknowns (p2p, iommu, acs), or their default is the model's own
# (precision) or one no answer turns on (memory utilisation). vLLM's step budgets come last: they move
# only the reserve counted beside the plan, never the layout.
PROBED = (
    "nvlink",
    "node_link_gbs",
    "goal",
    "virtualized",
    "kv_cache_dtype",
    "context_tokens",
    "gpus_per_socket",
    "max_num_seqs",
    "max_num_batched_tokens",
)
# A training job is chosen by its state and gradient sync, not by the serving goal, the KV cache or the
# context: it tries how the state is sharded and the optimizer first.
PROBED_TRAINING = ("sharding", "optimizer", "nvlink", "node_link_gbs", "virtualized")
MAX_EVALUATIONS = 8
TOLD = ("advice", "warning", "error")  # the findings that tell the user to do something
# The figure a branch shows: the first of these that both answers have and that differs.
KEY_FIGURES = (
    "train_step_s",
    "train_state_gib_per_gpu",
    "grad_sync_s_per_step",
    "conversations",
    "conversations_after_reserve",
    "prefill_allreduce_ms",
    "throughput_tokens_per_s",
    "one_user_tokens_per_s",
    "decode_tokens_per_s_upper_bound",
    "bubble_fraction",
    "weights_gib",
    "kv_gib_per_conversation",
    "usable_gib_per_gpu",
    "allreduce_count_per_token",
    "allreduce_mib_per_token",
)
# Key figures counted beside the plan, in a finding's figures rather than the figure table: read from
# the answer's facts.
BESIDE = ("conversations_after_reserve",)


def answer_key(rec: Recommendation | None) -> tuple[Any, ...] | None:
    """What a user would see change: the layout, and the findings that advise, warn or refuse."""
    if rec is None:
        return None
    return (rec.layout, tuple(sorted(f.rule for f in rec.findings if f.severity in TOLD)))


def plausible_values(kb: Knowledge, s: Scenario, fact: str, value: Any, state: str) -> tuple[Any, ...]:
    """The other values worth trying for an unstated fact: the bridge the card takes (widest that fits
    the node) for optional hardware; none for a value the catalogue fixes; the field's `plausible`
    values (knowledge/fields.yaml); the other yes/no; the other choices of an enum."""
    spec, field = kb.facts.get(fact), field_table(kb.root).by_fact().get(fact)
    if spec is None or spec.scenario is None or field is None:
        return ()
    if state == "unknown" and field.plausible_split and value is None:
        per_node = int(s.get("hardware.gpus_per_node") or 1)
        nvlink = str(s.get("hardware.nvlink") or "none")
        if nvlink == "nvswitch" or DOMAIN_SIZES.get(nvlink, 1) >= per_node:
            return ()  # one NVLink domain holds the node: no group crosses the sockets' link
        return tuple(per_node // k for k in field.plausible_split if per_node % k == 0 and per_node // k > 1)
    if value is None:
        return ()
    if state == "unknown":
        if not optional_hardware(s, spec.scenario):
            return ()
        per_node, widest = int(s.get("hardware.gpus_per_node") or 1), DOMAIN_SIZES.get(s.gpu.nvlink, 1)
        fits = [kind for kind, size in DOMAIN_SIZES.items() if 1 < size <= min(widest, per_node)]
        return (fits[-1],) if fits else ()
    if field.default_from is not None:  # the catalogue's own: an SXM board's NVSwitch, a model's precision
        return ()
    if spec.scenario.startswith("hardware.node_link") and int(s.get("hardware.nodes") or 1) < 2:
        return ()  # one node: the network carries nothing
    if field.plausible:
        return tuple(v for v in field.plausible if v != value)
    if spec.type == "bool":
        return (not value,)
    if spec.type == "enum":
        return tuple(c for c in spec.choices if c != value)
    return ()


def trials(
    kb: Knowledge, s: Scenario, states: Mapping[str, str], env: Mapping[str, Any] | None = None
) -> list[tuple[str, str, tuple[Any, ...]]]:
    """Each unstated fact worth trying, in PROBED's order (PROBED_TRAINING's for a training job): (fact,
    scenario path, the values to try); `states` are the input facts' states (Recommendation.input_states),
    `env` the recommendation's facts, where an engine default stands for a field left empty."""
    fields = field_table(kb.root).by_fact()
    out = []
    for fact in PROBED_TRAINING if s.get("workload.kind") == "training" else PROBED:
        state, field = states.get(fact), fields.get(fact)
        if state not in ("default", "unknown") or field is None:
            continue
        values = plausible_values(kb, s, fact, assumed_value(s, field.path, field.default_figure, env), state)
        if values:
            out.append((fact, field.path, values))
    return out


def assumed_value(s: Scenario, path: str, figure: str | None, env: Mapping[str, Any] | None) -> Any:
    """The value the answer assumed for the field at `path`: the scenario's, or where it is empty the
    engine default that formula result `figure` stands for."""
    value = s.get(path)
    if value is None and figure is not None and env is not None:
        return env.get(figure)
    return value


def with_value(s: Scenario, path: str, value: Any) -> Scenario:
    """The scenario with one field set, as if the user had stated it."""
    data = dict(s.data)
    if "." in path:
        section, key = path.split(".", 1)
        data[section] = {**data[section], key: value}
    else:
        data[path] = value
    return replace(s, data=data, given=s.given | {path})


def find_assumptions(
    kb: Knowledge,
    s: Scenario,
    rec: Recommendation,
    evaluate: Callable[[Scenario], Recommendation],
    readers: Mapping[str, frozenset[str]],
    units: Mapping[str, str | None],
) -> list[Assumption]:
    """The unstated facts whose other values change the answer, each with the answers otherwise.
    `evaluate` answers a scenario; `readers` are the formulas' inputs by formula id; `units` the
    contract figures' units."""
    base = answer_key(rec)
    budget = MAX_EVALUATIONS
    found: list[Assumption] = []
    fields = field_table(kb.root).by_fact()
    figures = {fact: f.default_figure for fact, f in fields.items()}
    units = {**{k: kb.facts[k].unit for k in BESIDE if k in kb.facts}, **units}
    for fact, path, values in trials(kb, s, rec.input_states, rec.env):
        if fact == "sharding" and rec.layout is not None and rec.layout.sharding:
            continue  # chosen among all its values already (chosen_assumption)
        branches: list[Branch] = []
        for other_value in values:
            if budget <= 0:
                break
            budget -= 1
            try:
                other = evaluate(with_value(s, path, other_value))
            except AdvisorError:
                continue
            if answer_key(other) != base:
                branches.append(branch(other_value, rec, other, units))
        if branches:
            value = assumed_value(s, path, figures.get(fact), rec.env)
            default = kb.formulas.get(rec.trace.get(figures[fact] or "", "")) if figures.get(fact) else None
            reason = default.assumptions if default is not None else None
            template = None
            if value is None and fields[fact].plausible_split:  # unknown: the whole node as one part
                value, template = int(s.get("hardware.gpus_per_node") or 1), label_text("assumed_whole_node")
            found.append(_assumption(kb, s, fact, value, rec.input_states[fact], branches, readers, reason, template))
    return found


def branch(value: Any, base: Recommendation, other: Recommendation, units: Mapping[str, str | None]) -> Branch:
    """The answer `other` (under `value`) beside `base`: its layout, the first key figure that differs,
    the findings that come or go."""
    figure = next(
        (
            k
            for k in KEY_FIGURES
            if _figure(other, k) is not None and _figure(base, k) is not None and _figure(other, k) != _figure(base, k)
        ),
        None,
    )
    mine, theirs = {f.rule for f in base.findings}, {f.rule for f in other.findings}
    return Branch(
        value=value,
        layout=other.layout,
        figure=figure,
        figure_value=_figure(other, figure) if figure else None,
        assumed_value=_figure(base, figure) if figure else None,
        unit=units.get(figure) if figure else None,
        gained=tuple(sorted(theirs - mine)),
        lost=tuple(sorted(mine - theirs)),
    )


def _figure(rec: Recommendation, name: str) -> Any:
    return rec.env.get(name) if name in BESIDE else rec.figures.get(name)


def _assumption(
    kb: Knowledge,
    s: Scenario,
    fact: str,
    value: Any,
    state: str,
    branches: list[Branch],
    readers: Mapping[str, frozenset[str]],
    default: Text | None = None,
    template: Text | None = None,
) -> Assumption:
    """`default`: the words of the formula that sets the engine's default, where the value is that;
    `template`: the words of a working value of an unknown fact, with `{value}`."""
    spec = kb.facts[fact]
    rules = tuple(sorted({r for b in branches for r in (*b.gained, *b.lost)}))
    formulas = tuple(sorted(fid for fid, names in readers.items() if fact in names))
    reason = label_text("assumed_optional" if state == "unknown" else "assumed_default")
    if default is not None:  # why this value: the engine's default for the card, in the formula's words
        reason = Text({lang: default.get(lang).replace("{", "{{").replace("}", "}}") for lang in LANGS})
    if template is not None:
        reason = template
    why = Text({lang: _why(spec.doc.get(lang), formulas, rules, lang) for lang in LANGS})
    return Assumption(
        fact=fact,
        value=value,
        state=state,
        reason_text=Message.of(reason, {"value": value, "gpu": s.gpu.name}),
        why_text=Message(why),
        otherwise=tuple(branches),
        rules=rules,
        formulas=formulas,
        question_text=spec.question,
        settle_text=spec.settle,
    )


def _why(doc: str, formulas: tuple[str, ...], rules: tuple[str, ...], lang: str) -> str:
    parts = [f"{label('formulas_word', lang)} {', '.join(formulas)}"] if formulas else []
    if rules:
        parts.append(f"{label('rules_word', lang)} {', '.join(rules)}")
    text = f"{doc} {label('read_by', lang)}: {'; '.join(parts)}." if parts else doc
    return text.replace("{", "{{").replace("}", "}}")  # a template: its own braces are text


def chosen_assumption(kb: Knowledge, fact: str, value: Any, branches: list[Branch]) -> Assumption:
    """An unstated input the advisor chose by its estimates (the training sharding): the user did not
    say, so it is an assumption, with the best answer under each other value."""
    spec = kb.facts[fact]
    reason = Message.of(label_text("assumed_chosen"), {"value": value})
    return Assumption(
        fact=fact,
        value=value,
        state="default",
        reason_text=reason,
        why_text=Message(Text({lang: spec.doc.get(lang).replace("{", "{{").replace("}", "}}") for lang in LANGS})),
        otherwise=tuple(branches),
        formulas=("train-step-time",),
        question_text=spec.question,
        settle_text=spec.settle,
    )
