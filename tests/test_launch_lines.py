"""Launch lines a user can paste: every printed command parses as shell, holds only the engines' documented
flags with values of the documented form, serves the checkpoint the weights figure describes, launches a
config.json model from its folder, names the all-to-all backend of multi-node expert parallelism, and a
training job gets no serving command but the reason.

The checks here read the flag table (knowledge/engine_flags.yaml) on their own; they do not call the
builder's validation, so a builder that skipped it would still be caught.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from advisor.kb.knowledge import Knowledge
from tests.conftest import RTX_PRO_70B, with_users
from tests.scenarios import README_FIRST

DATA = Path(__file__).parent / "data"
FORMS = {
    "count": re.compile(r"0|[1-9][0-9]*"),
    "positive": re.compile(r"[1-9][0-9]*"),
    "text": re.compile(r"[^-\s]\S*|[^-].*"),
    "address": re.compile(r"(\$[A-Z][A-Z0-9_]*|[A-Za-z0-9.-]+):[0-9]+|\$[A-Z][A-Z0-9_]*"),
}


def flag_problems(line: str, kb: Knowledge) -> list[str]:
    """What is wrong with one printed command, judged by the engines' flag table alone."""
    words = shlex.split(line)
    engine = next((e for e in kb.engine_flags.values() if words[: len(e.program)] == list(e.program)), None)
    if engine is None:
        return [f"no known engine starts {line!r}"]
    rest, problems = words[len(engine.program) :], []
    if engine.model_flag is None:
        if not rest or rest[0].startswith("-"):
            return [f"{engine.name}: the model must come first: {line!r}"]
        rest = rest[1:]
    seen: set[str] = set()
    i = 0
    while i < len(rest):
        word = rest[i]
        spec = engine.flag(word)
        if spec is None:
            problems.append(f"{engine.name}: {word!r} is not a documented flag")
            i += 1
            continue
        if word in seen:
            problems.append(f"{engine.name}: {word} given twice")
        seen.add(word)
        if spec.value == "switch":
            i += 1
            continue
        value = rest[i + 1] if i + 1 < len(rest) else None
        if value is None or value.startswith("--"):
            problems.append(f"{engine.name}: {word} needs a value")
        elif spec.value == "choice" and value not in spec.choices:
            problems.append(f"{engine.name}: {word} {value!r} is not one of {', '.join(spec.choices)}")
        elif spec.value == "fraction" and not 0 < float(value) <= 1:
            problems.append(f"{engine.name}: {word} {value} is not in (0, 1]")
        elif spec.value in FORMS and not FORMS[spec.value].fullmatch(value):
            problems.append(f"{engine.name}: {word} {value!r} is not a {spec.value}")
        i += 2
    if engine.model_flag and engine.model_flag not in seen:
        problems.append(f"{engine.name}: no {engine.model_flag}")
    return problems


HEREDOC = re.compile(r"cat << 'EOF' > (\S+)")


def split_snippet(snippet: str) -> tuple[list[str], dict[str, str]]:
    """The command lines of a launch snippet (comments are the user's instructions, not commands) and the
    files its here-documents write (name -> text)."""
    lines, files, current = [], {}, None
    for line in snippet.splitlines():
        if current is not None:
            if line == "EOF":
                current = None
            else:
                files[current] += line + "\n"
            continue
        opened = HEREDOC.fullmatch(line)
        if opened:
            current = opened.group(1)
            files[current] = ""
        elif line.strip() and not line.lstrip().startswith("#"):
            lines.append(line)
    return lines, files


def commands(snippet: str) -> list[str]:
    """The command lines of a launch snippet."""
    return split_snippet(snippet)[0]


def config_problems(text: str, engine_id: str, kb: Knowledge) -> list[str]:
    """What is wrong with a config file a snippet writes, judged by the engine's documented config keys."""
    documented = {k.flag: k for k in kb.engine_flags[engine_id].config_keys}
    problems = []

    def walk(node: dict[str, Any], prefix: str) -> None:
        for key, value in node.items():
            path = f"{prefix}{key}"
            if isinstance(value, dict):
                walk(value, path + ".")
            elif path not in documented:
                problems.append(f"{engine_id}: config key {path} is not documented")
            elif documented[path].value == "switch" and value is not True:
                problems.append(f"{engine_id}: {path} is a switch, not {value!r}")
            elif documented[path].value == "choice" and str(value) not in documented[path].choices:
                problems.append(f"{engine_id}: {path} {value!r} is not one of {documented[path].choices}")

    data = yaml.safe_load(text)
    walk(data if isinstance(data, dict) else {}, "")
    return problems or ([] if isinstance(data, dict) else [f"{engine_id}: the config file is not a mapping"])


def assert_valid(launch: dict[str, str], kb: Knowledge) -> None:
    """Every snippet is shell a user can paste, every command holds only documented flags, and every
    config file it writes only documented keys, and is the one its command reads."""
    for engine, snippet in launch.items():
        if shutil.which("bash"):
            syntax = subprocess.run(["bash", "-n", "-c", snippet], capture_output=True, text=True)
            assert syntax.returncode == 0, f"{engine}: {syntax.stderr}\n{snippet}"
        lines, files = split_snippet(snippet)
        for line in lines:
            assert not flag_problems(line, kb), (flag_problems(line, kb), line)
        for name, text in files.items():
            assert not config_problems(text, engine, kb), (config_problems(text, engine, kb), snippet)
            assert any(name in shlex.split(line) for line in lines), f"{engine}: nothing reads {name}\n{snippet}"


SCENARIOS: dict[str, dict[str, Any]] = {
    "dense on one card": {
        "model": "Llama 3.1 8B",
        "hardware": {"gpu": "L40S", "gpus_per_node": 1},
        "workload": {"concurrent_conversations": 4},
    },
    "dense replicas": {
        "model": "Llama 3.1 8B",
        "hardware": {"gpu": "L40S", "gpus_per_node": 4},
        "workload": {"concurrent_conversations": 16},
    },
    "dense tp for latency": {
        "model": "Llama 3.1 8B",
        "hardware": {"gpu": "H100 SXM", "gpus_per_node": 4},
        "workload": {"concurrent_conversations": 1, "goal": "latency"},
    },
    "fp8 seed, tp 2": with_users(RTX_PRO_70B, 60),
    "fp8 seed, replicas": with_users(RTX_PRO_70B, 20),
    "fp8 seed, broken p2p, pp": {
        **with_users(RTX_PRO_70B, 60),
        "hardware": {"gpu": "RTX PRO 6000", "gpus_per_node": 2, "p2p": "broken"},
    },
    "tp inside domains, pp between": {
        "model": "Llama 3.1 405B",
        "precision": "bf16",
        "hardware": {"gpu": "H200 NVL", "gpus_per_node": 8, "nvlink": "bridge-4"},
        "workload": {"concurrent_conversations": 16},
    },
    "pp across two nodes": {
        "model": "Llama 3.1 405B",
        "precision": "bf16",
        "hardware": {"gpu": "H100 SXM", "gpus_per_node": 8, "nodes": 2, "node_link_gbps": 400},
        "workload": {"concurrent_conversations": 8},
    },
    "moe ep on one node": {
        "model": "DeepSeek-V3",
        "precision": "fp8",
        "hardware": {"gpu": "H200 SXM", "gpus_per_node": 8},
        "workload": {"concurrent_conversations": 200},
    },
    "moe ep over two nodes": {
        "model": "DeepSeek-V3",
        "hardware": {"gpu": "H100 SXM", "gpus_per_node": 8, "nodes": 2},
        "workload": {"concurrent_conversations": 100},
    },
    "moe ep over two nodes, latency": {
        "model": "DeepSeek-V3",
        "hardware": {"gpu": "H100 SXM", "gpus_per_node": 8, "nodes": 2},
        "workload": {"concurrent_conversations": 100, "goal": "latency"},
    },
    "qwen moe fp8 without a repository": {
        "model": "Qwen3-235B-A22B",
        "precision": "fp8",
        "hardware": {"gpu": "H100 SXM", "gpus_per_node": 8},
        "workload": {"concurrent_conversations": 10},
    },
    "nvfp4 without a repository": {
        "model": "Qwen3-235B-A22B",
        "precision": "nvfp4",
        "hardware": {"gpu": "RTX PRO 6000", "gpus_per_node": 2},
        "workload": {"concurrent_conversations": 10},
    },
    "online fp8 that fits": {
        "model": "Llama 3.1 70B",
        "precision": "fp8",
        "hardware": {"gpu": "H100 SXM", "gpus_per_node": 4},
        "workload": {"concurrent_conversations": 40},
    },
    "mxfp4 native": {
        "model": "gpt-oss-120b",
        "hardware": {"gpu": "H100 SXM", "gpus_per_node": 2},
        "workload": {"concurrent_conversations": 10},
    },
    "config.json model": {
        "model": str(DATA / "qwen3-8b-config.json"),
        "hardware": {"gpu": "H100 SXM", "gpus_per_node": 2},
        "workload": {"concurrent_conversations": 10},
    },
    "training": {
        "model": "Llama 3.1 8B",
        "hardware": {"gpu": "H100 SXM", "gpus_per_node": 8},
        "workload": {"kind": "training"},
    },
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_every_launch_line_parses_and_holds_only_documented_flags(advise, engine, name):
    rec = advise(SCENARIOS[name])
    assert rec.launch, name
    assert_valid(rec.launch, engine.kb)


def test_the_checker_catches_what_the_issue_reported(engine):
    kb = engine.kb
    bad = "vllm serve Mistral-Small (MistralForCausalLM, from config.json) --tensor-parallel-size 2"
    assert flag_problems(bad, kb)  # the display name is not a model argument
    assert flag_problems("vllm serve m --tensor-parallel-size two", kb)
    assert flag_problems("vllm serve m --gpu-memory-utilization 1.5", kb)
    assert flag_problems("vllm serve m --all2all-backend deepep", kb)  # SGLang's spelling, not vLLM's
    assert flag_problems("python -m sglang.launch_server --model-path m --moe-a2a-backend deepep_low_latency", kb)
    assert flag_problems("vllm serve m --enable-expert-paralel", kb)
    assert not flag_problems("vllm serve m --all2all-backend deepep_low_latency --enable-expert-parallel", kb)


def test_the_flag_table_cites_the_engines_for_every_flag(engine):
    kb = engine.kb
    assert set(kb.engine_flags) == {"vllm", "sglang", "trtllm"}
    for serving in kb.engine_flags.values():
        assert serving.version
        for spec in serving.flags:
            assert spec.cite.source in kb.sources, (serving.id, spec.flag)
            assert spec.flag.startswith("--")
        for spec in serving.config_keys:
            assert spec.cite.source in kb.sources, (serving.id, spec.flag)
            assert not spec.flag.startswith("-")


def test_tensorrt_llm_gets_its_config_file_for_what_has_no_flag(cli, engine):
    """DeepSeek R1 on 8 H200 for 200 users with an FP8 cache: TensorRT-LLM has no flag for the cache's type
    or attention data parallelism, so the snippet writes the config file its recipe writes and the line
    reads it; the KV share is the plan's cache over the memory free after the weights."""
    code, out, err = cli(
        "recommend",
        "--model",
        "deepseek r1",
        "--gpu",
        "h200",
        "--gpus",
        "8",
        "--users",
        "200",
        "--kv-cache-dtype",
        "fp8",
        "--engine",
        "trtllm",
        "--format",
        "json",
    )
    assert code == 0, err
    doc = json.loads(out)
    assert list(doc["launch"])[0] == "trtllm"  # the engine asked for comes first
    lines, files = split_snippet(doc["launch"]["trtllm"])
    config = yaml.safe_load(files["trtllm-config.yml"])
    assert config == {"enable_attention_dp": True, "kv_cache_config": {"dtype": "fp8"}}
    words = shlex.split(lines[-1])
    assert words[:2] == ["trtllm-serve", "deepseek-ai/DeepSeek-R1"]
    assert words[words.index("--tp_size") + 1] == words[words.index("--ep_size") + 1] == "8"
    fraction = float(words[words.index("--kv_cache_free_gpu_memory_fraction") + 1])
    assert 0.3 < fraction < 0.95
    assert_valid(doc["launch"], engine.kb)
    assert config_problems("kv_cache_config:\n  dtype: int3\n", "trtllm", engine.kb)
    assert config_problems("enable_chunked_context: true\n", "trtllm", engine.kb)


# --- the issue's examples, as users ask them ------------------------------------------------------


def test_fp8_on_two_rtx_pro_6000_serves_the_published_fp8_checkpoint_the_weights_figure_counts(cli, engine):
    code, out, err = cli(
        *README_FIRST,
        "--format",
        "json",
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["figures"]["weights_gib"] == 68  # the seed's published FP8 checkpoint
    vllm, sglang = doc["launch"]["vllm"], doc["launch"]["sglang"]
    assert vllm.startswith("vllm serve RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic --tensor-parallel-size 2")
    assert "--model-path RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic --tp 2" in sglang
    assert "--quantization" not in vllm + sglang
    assert_valid(doc["launch"], engine.kb)


def test_fp8_of_a_bf16_only_model_on_one_96_gb_card_does_not_offer_online_quantization(cli):
    code, out, err = cli(
        "recommend",
        "--model",
        "llama 3.1 70b",
        "--precision",
        "fp8",
        "--gpu",
        "rtx pro 6000",
        "--gpus",
        "1",
        "--users",
        "2",
        "--context",
        "4096",
    )
    assert code == 0, err
    launch = out[out.index("\nLaunch") :]
    assert all("--quantization" not in line for line in commands(launch))
    assert "online quantization (--quantization fp8) is not offered" in launch
    assert "131.4 GiB (141.1 GB) per GPU, more than the 95.6 GiB of each GPU" in launch
    assert 'vllm serve "$FP8_CHECKPOINT"' in launch


def test_fp8_of_a_bf16_only_model_that_fits_at_load_says_what_loading_costs(advise, engine):
    rec = advise(SCENARIOS["online fp8 that fits"])
    vllm = rec.launch["vllm"]
    assert "--quantization fp8" in commands(vllm)[0]
    assert "loads the BF16 weights at their own precision before quantizing" in vllm
    assert "within the" in vllm


def test_a_config_json_model_launches_from_its_folder_quoted(cli, engine, tmp_path):
    folder = tmp_path / "my models" / "Mistral Small"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text((DATA / "qwen3-8b-config.json").read_text())
    code, out, err = cli(
        "recommend",
        "--model",
        str(folder / "config.json"),
        "--gpu",
        "h100 sxm",
        "--gpus",
        "2",
        "--users",
        "10",
        "--context",
        "8192",
        "--format",
        "json",
    )
    assert code == 0, err
    launch = json.loads(out)["launch"]
    assert "from config.json" not in launch["vllm"] + launch["sglang"]
    assert shlex.split(commands(launch["vllm"])[0])[2] == str(folder)
    sglang = shlex.split(commands(launch["sglang"])[0])
    assert sglang[sglang.index("--model-path") + 1] == str(folder)
    assert_valid(launch, engine.kb)


def test_multi_node_expert_parallelism_names_its_all_to_all_backend(cli, engine):
    code, out, err = cli(
        "recommend",
        "--model",
        "deepseek-v3",
        "--gpu",
        "h100 sxm",
        "--gpus",
        "8",
        "--nodes",
        "2",
        "--users",
        "100",
        "--context",
        "8192",
        "--node-link-gbps",
        "400",
        "--layout",
        "replicas=16,ep=16",
        "--format",
        "json",
    )
    assert code == 0, err
    launch = json.loads(out)["launch"]
    vllm, sglang = commands(launch["vllm"]), commands(launch["sglang"])
    assert len(vllm) == 2 and len(sglang) == 2  # one command per node
    assert all("--enable-expert-parallel" in c and "--all2all-backend deepep_" in c for c in vllm)
    assert "--headless" in vllm[1] and "--data-parallel-start-rank 8" in vllm[1]
    assert all("--moe-a2a-backend deepep" in c and "--nnodes 2" in c for c in sglang)
    assert [re.search(r"--node-rank (\d)", c).group(1) for c in sglang] == ["0", "1"]  # type: ignore[union-attr]
    assert "DeepEP" in launch["vllm"]
    assert_valid(launch, engine.kb)


def test_expert_parallelism_on_one_node_keeps_the_default_backend(advise):
    rec = advise(SCENARIOS["moe ep on one node"])
    assert "--all2all-backend" not in rec.launch["vllm"] and "--moe-a2a-backend" not in rec.launch["sglang"]


def test_the_launch_lines_follow_the_ep_backend_the_user_names(cli, engine):
    """'DeepSeek-V3 on one node of 8 H200 as EP 8 with DeepEP and two-batch overlap: what do I launch?'
    Each engine gets its documented DeepEP backend and its overlap switch, even inside one node."""
    kb = engine.kb

    def launch(backend: str) -> dict[str, str]:
        args = ("--model", "deepseek-v3", "--precision", "fp8", "--gpu", "h200 sxm", "--gpus", "8")
        more = ("--users", "200", "--layout", "replicas=8,ep=8", "--ep-backend", backend, "--format", "json")
        code, out, err = cli("recommend", *args, *more)
        assert code == 0, err
        result: dict[str, str] = json.loads(out)["launch"]
        assert_valid(result, kb)
        return result

    def words(snippet: str) -> list[str]:
        (line,) = commands(snippet)
        return shlex.split(line)

    tbo = launch("deepep-tbo")
    sglang, vllm = words(tbo["sglang"]), words(tbo["vllm"])
    assert sglang[sglang.index("--moe-a2a-backend") + 1] == "deepep" and "--enable-two-batch-overlap" in sglang
    assert vllm[vllm.index("--all2all-backend") + 1].startswith("deepep_")
    assert "--enable-expert-parallel" in vllm and "--enable-dbo" in vllm and "--data-parallel-size" in vllm
    deepep = launch("deepep")
    sglang, vllm = words(deepep["sglang"]), words(deepep["vllm"])
    assert "--moe-a2a-backend" in sglang and "--enable-two-batch-overlap" not in sglang
    assert "--all2all-backend" in vllm and "--enable-dbo" not in vllm
    plain = launch("nccl")
    assert "--moe-a2a-backend" not in plain["sglang"] and "--all2all-backend" not in plain["vllm"]
    for flag in ("--enable-two-batch-overlap", "--enable-dbo"):
        engine_id = "sglang" if flag == "--enable-two-batch-overlap" else "vllm"
        assert kb.engine_flags[engine_id].flag(flag).cite.source in kb.sources


def test_a_full_fine_tune_gets_no_serving_command_and_the_reason(cli):
    code, out, err = cli(
        "recommend",
        "--model",
        "llama 3.1 8b",
        "--gpu",
        "h100 sxm",
        "--gpus",
        "8",
        "--workload",
        "training",
        "--format",
        "json",
    )
    assert code == 0, err
    launch = json.loads(out)["launch"]
    assert set(launch) == {"training"}
    assert launch["training"].startswith("# no serving command: this is a training job")
    assert "vllm serve" not in out and "sglang.launch_server" not in out
