"""Every parser against random bytes, truncations and mutations of real samples, long lines, NUL bytes
and wrong encodings: it parses or leaves a located note; it never raises; it stays fast.

The number of generated cases per parser is ADVISOR_FUZZ_EXAMPLES (default 40 in CI); a local soak
run sets it to thousands: `ADVISOR_FUZZ_EXAMPLES=5000 python -m pytest tests/test_hardening.py`.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from advisor.errors import AdvisorError
from advisor.inputs.evidence import Parsed
from advisor.inputs.evidence.registry import READERS, parse_files
from advisor.inputs.fields import field_table
from advisor.inputs.freetext import understand
from advisor.inputs.modelconfig import ALIASES, LAYER_KEYS, checked, estimate_params, local_attention, normalise
from advisor.inputs.scenario import build
from advisor.kb.expr import parse as parse_expr
from advisor.yamlio import loads
from tests.evidence_data import AUDIT_DATA, verbatim

EXAMPLES = int(os.environ.get("ADVISOR_FUZZ_EXAMPLES", "40"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
SAMPLES = {p.name: verbatim(p.name) for p in sorted(AUDIT_DATA.glob("*.txt"))}
PARSERS = [(r.kind, r.parse) for r in READERS]


@st.composite
def mutated(draw: st.DrawFn) -> str:
    """A real sample, cut, spliced, with junk inserted, or replaced by random text."""
    text = draw(st.sampled_from(sorted(SAMPLES.values())))
    how = draw(st.sampled_from(["truncate", "insert", "delete", "duplicate", "random", "nul", "longline"]))
    if how == "random":
        return draw(st.text(max_size=2000))
    i = draw(st.integers(0, max(0, len(text) - 1)))
    j = draw(st.integers(i, len(text)))
    junk = draw(st.text(max_size=50))
    if how == "truncate":
        return text[:i]
    if how == "insert":
        return text[:i] + junk + text[i:]
    if how == "delete":
        return text[:i] + text[j:]
    if how == "duplicate":
        return text[:j] + text[i:j] + text[j:]
    if how == "nul":
        return text[:i] + "\x00" + text[i:]
    return text[:i] + "GPU0 " * 20000 + text[i:]


@pytest.mark.parametrize(("kind", "parse"), PARSERS, ids=[k for k, _ in PARSERS])
@FUZZ
@given(text=mutated())
def test_parsers_never_raise_on_mutated_real_outputs(kind, parse, text):
    result = parse(text, "fuzz.txt")
    assert isinstance(result, Parsed)
    assert all(isinstance(n, str) for n in result.notes)


@FUZZ
@given(data=st.binary(max_size=4000))
def test_audit_of_random_bytes_notes_each_file_and_never_raises(tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("fuzz")
    (folder / "a.bin").write_bytes(data)
    (folder / "b.txt").write_bytes(data.replace(b"\x00", b""))
    inputs, parsed = parse_files([folder])
    assert len(inputs) == 2
    for item in inputs:
        assert item.kinds or item.notes


@pytest.mark.parametrize(("kind", "parse"), PARSERS, ids=[k for k, _ in PARSERS])
def test_one_megabyte_inputs_stay_fast(kind, parse):
    """Issue target: under one second per 1 MB input (measured figures are in docs/reliability.md)."""
    base = "\n".join(SAMPLES.values())
    text = (base * (1_048_576 // len(base) + 1))[:1_048_576]
    start = time.perf_counter()
    parse(text, "big.txt")
    long_line = "GPU0 " * 210_000
    parse(long_line, "line.txt")
    assert time.perf_counter() - start < 3.0  # generous on a loaded 2-core machine; typical figures are far lower


@FUZZ
@given(text=st.text(max_size=3000))
def test_yaml_loading_never_raises_anything_but_advisor_errors(text):
    try:
        loads(text, "fuzz.yaml")
    except AdvisorError as exc:
        assert "fuzz.yaml" in exc.one_line()


@FUZZ
@given(
    doc=st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=5),
        max_leaves=20,
    )
)
def test_scenario_building_refuses_garbage_with_one_clear_line(engine, doc):
    try:
        build(doc if isinstance(doc, dict) else {"model": doc}, engine.kb)
    except AdvisorError as exc:
        assert "\n" not in exc.one_line()


@FUZZ
@given(
    cfg=st.dictionaries(
        st.sampled_from(
            [
                "num_hidden_layers",
                "hidden_size",
                "num_attention_heads",
                "num_key_value_heads",
                "head_dim",
                "num_experts",
                "num_local_experts",
                "intermediate_size",
                "text_config",
                "first_k_dense_replace",
                "decoder_sparse_step",
                "mlp_only_layers",
                "vocab_size",
            ]
        ),
        st.none() | st.integers(-5, 100000) | st.floats() | st.text(max_size=5) | st.lists(st.integers(0, 10)),
        max_size=10,
    )
)
def test_model_config_reader_refuses_bad_configs_cleanly(cfg):
    try:
        normalise(cfg, "config.json")
    except AdvisorError as exc:
        assert "config.json" in exc.one_line()


ANY_VALUE = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=10**30, max_value=10**400)
    | st.floats()
    | st.text(max_size=12)
    | st.from_regex(r"-?[0-9]{1,60}([.,][0-9]{1,5})?[kKmM%]?", fullmatch=True)
    | st.lists(st.integers(), max_size=3)
)
CONFIG_KEYS = [name for names in ALIASES.values() for name in names]


@FUZZ
@given(
    cfg=st.dictionaries(st.sampled_from([*CONFIG_KEYS, *LAYER_KEYS]), ANY_VALUE, max_size=12),
)
def test_a_config_json_is_checked_before_any_arithmetic(cfg):
    base = {"num_hidden_layers": 36, "hidden_size": 4096, "num_attention_heads": 32}
    try:
        config = normalise(checked({**base, **cfg}, "config.json"), "config.json")
    except AdvisorError as exc:
        assert "config.json" in exc.one_line() and "\n" not in exc.one_line()
        return
    total, active = estimate_params(config)
    assert 0 <= active <= total < 1e30
    local_attention({**base, **cfg}, config["num_hidden_layers"])


@FUZZ
@given(
    path=st.sampled_from([f.path for f in field_table().fields if f.type in ("count", "tokens", "share", "gbps")]),
    value=ANY_VALUE,
)
def test_every_scenario_number_is_bounded_or_refused_by_name(engine, path, value):
    raw: dict = {"model": "llama 3.1 8b", "hardware": {"gpu": "h100 sxm"}, "workload": {}}
    section, _, key = path.partition(".")
    raw[section][key] = value
    field = {f.path: f for f in field_table().fields}[path]
    try:
        scenario = build(raw, engine.kb)
    except AdvisorError as exc:
        assert "\n" not in exc.one_line() and len(exc.one_line()) < 400
        return
    got = scenario.get(path)
    if value is None:  # unset: the field's default, or unknown where it has none
        return
    assert isinstance(got, (int, float)) and 0 < got <= (field.max or 1)


@FUZZ
@given(text=st.text(max_size=300))
def test_chat_answers_never_raise(engine, text):
    understand(text, engine.kb)
    understand(text, engine.kb, expecting="users")


@FUZZ
@given(text=st.text(max_size=200))
def test_rule_text_is_parsed_or_refused_never_executed(text):
    try:
        e = parse_expr(text, {"tp", "pp", "users"})
    except AdvisorError:
        return
    e.evaluate({"tp": 2, "pp": None, "users": 0})


@pytest.mark.parametrize(
    ("scenario", "expected"),
    [
        ({"hardware": {"gpu": "l40s", "gpus_per_node": 0}}, "must be at least 1"),
        ({"hardware": {"gpu": "l40s", "gpus_per_node": -2}}, "must be at least 1"),
        ({"hardware": {"gpu": "l40s", "gpus_per_node": float("nan")}}, "whole number"),
        ({"hardware": {"gpu": "l40s", "gpus_per_node": 1_000_000}}, "beyond what the advisor plans for"),
        ({"hardware": {"gpu": "l40s"}, "workload": {"context_tokens": "10M"}}, "beyond"),
        ({"hardware": {"gpu": "l40s"}, "workload": {"memory_utilization": 0}}, "positive number"),
        ({"hardware": {"gpu": "l40s"}, "workload": {"concurrent_conversations": 2.5}}, "whole number"),
    ],
)
def test_absurd_numbers_get_a_clear_message(engine, scenario, expected):
    with pytest.raises(AdvisorError, match=expected):
        build({"model": "llama 3.1 8b", **scenario}, engine.kb)


def test_a_huge_but_valid_request_gets_a_correct_answer(engine):
    from advisor.core.layouts import Layout

    rec = engine.evaluate(
        build(
            {
                "model": "llama 3.1 8b",
                "hardware": {"gpu": "h100 sxm", "gpus_per_node": 8, "nodes": 8},
                "workload": {"concurrent_conversations": 1_000_000, "context_tokens": 131072},
            },
            engine.kb,
        )
    )
    assert rec.finding("users-exceed-capacity") is not None
    # every layout is overloaded, so throughput decides: a layout holding more conversations lost only on a
    # tie-break, its throughput within the 10 % tolerance of the chosen one's
    held = rec.figures["conversations"]
    larger = [a for a in rec.alternatives if not a.rejected and a.figures["conversations"] > held * 1.05]
    assert all(any("within 10 %" in w for w in a.why_not) for a in larger)
    assert rec.layout is not None and rec.layout.gpus <= 64 and rec.layout != Layout(1, 1, 64)
    assert rec.figures["conversations"] > 0


def test_an_enormous_file_is_read_in_part_with_a_note(tmp_path):
    big = tmp_path / "huge.log"
    with big.open("w") as fh:
        for _ in range(200_000):
            fh.write("NCCL INFO Channel 00 : 0[0] -> 1[1] via P2P/IPC padding padding padding\n")
    size = big.stat().st_size
    assert size > 8 * 1024 * 1024
    inputs, parsed = parse_files([big])
    assert any("only the first" in n for n in inputs[0].notes) and parsed


def test_samples_cover_every_kind_of_evidence():
    kinds = {r.kind for name, text in SAMPLES.items() for r in READERS if r.recognise(text)}
    assert kinds >= {
        "nvidia-smi-topo",
        "nvidia-smi-p2p",
        "nvidia-smi-q",
        "nvidia-smi-csv",
        "nvidia-smi-nvlink",
        "cmdline",
        "dmesg",
        "lspci",
        "launch",
        "nccl-tests",
        "p2p-bandwidth-test",
        "engine-log",
    }
    assert Path(AUDIT_DATA).is_dir()


def test_every_capture_is_recognised_the_same_with_windows_line_ends(tmp_path):
    # outputs copied from a Windows machine or a ticket system arrive with CRLF line ends
    differ = {}
    for name, text in SAMPLES.items():
        unix, windows = tmp_path / "unix.txt", tmp_path / "windows.txt"
        unix.write_text(text, encoding="utf-8", newline="\n")
        windows.write_text(text, encoding="utf-8", newline="\r\n")
        kinds = [parse_files([p])[0][0].kinds for p in (unix, windows)]
        if kinds[0] != kinds[1]:
            differ[name] = kinds
    assert differ == {}
