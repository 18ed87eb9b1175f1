"""`advisor completion bash|zsh|fish`: scripts generated from the parser, the field table and the
knowledge base; bash's is run for real, with the words a user typed."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from advisor.cli import main, parser

SUBCOMMANDS = tuple(next(a for a in parser()._actions if a.dest == "command").choices)


def script(capsys: pytest.CaptureFixture[str], shell: str) -> str:
    assert main(["completion", shell]) == 0
    return capsys.readouterr().out


def complete(bash_script: str, *words: str) -> list[str]:
    """What bash offers after the user typed `words` (the last one is being completed) and pressed Tab."""
    line = " ".join(f"'{w}'" for w in words)
    probe = f'COMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; _advisor; printf "%s\\n" "${{COMPREPLY[@]}}"'
    done = subprocess.run(["bash", "-c", bash_script + "\n" + probe], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


@pytest.fixture(scope="module")
def bash_script() -> str:
    if not shutil.which("bash"):
        pytest.skip("no bash on this machine")
    done = subprocess.run(
        [sys.executable, "-m", "advisor", "completion", "bash"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_bash_completes_rec_to_recommend(bash_script):
    assert complete(bash_script, "advisor", "rec") == ["recommend"]
    assert complete(bash_script, "advisor", "--debug", "au") == ["audit"]
    registered = subprocess.run(["bash", "-c", bash_script + "\ncomplete -p advisor"], capture_output=True, text=True)
    assert registered.stdout.strip() == "complete -o default -F _advisor advisor"


def test_bash_completes_flags_and_their_values(bash_script):
    assert "--node-link-gbps" in complete(bash_script, "advisor", "recommend", "--no")
    assert complete(bash_script, "advisor", "recommend", "--nvlink", "bri") == ["bridge-2", "bridge-4"]
    assert complete(bash_script, "advisor", "recommend", "--workload", "") == ["inference", "training"]
    assert complete(bash_script, "advisor", "recommend", "--virtualized", "") == ["yes", "no"]
    assert complete(bash_script, "advisor", "recommend", "--gpu", "h200") == ["h200-nvl", "h200-sxm"]
    assert "llama-3.1-8b" in complete(bash_script, "advisor", "size", "--model", "llama")
    assert complete(bash_script, "advisor", "size", "--kv-cache-dtype", "") == ["bf16", "fp16", "fp8"]
    assert complete(bash_script, "advisor", "audit", "--fail-on", "w") == ["warning"]
    assert complete(bash_script, "advisor", "transcripts", "re") == ["recover"]
    assert "--nvlink" not in complete(bash_script, "advisor", "size", "--")  # size takes fewer flags


# How each script offers a subcommand, and how it offers the values of one of the field table's flags.
OFFERS = {
    "bash": ("\n    {name})\n", "--nvlink) COMPREPLY=($(compgen -W 'none bridge-2 bridge-4 nvswitch'"),
    "zsh": ("'{name}:", "--nvlink) compadd -- 'none' 'bridge-2' 'bridge-4' 'nvswitch'"),
    "fish": ("-n __fish_use_subcommand -a {name} -d ", "-l nvlink -x -a 'none bridge-2 bridge-4 nvswitch'"),
}


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_every_script_names_every_subcommand(capsys, shell):
    text = script(capsys, shell)
    offer, nvlink = OFFERS[shell]
    assert {"recommend", "size", "audit", "chat", "completion"} <= set(SUBCOMMANDS)
    missing = [name for name in SUBCOMMANDS if offer.format(name=name) not in text]
    assert not missing
    assert nvlink in text


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_scripts_parse(capsys, shell):
    if not shutil.which(shell):
        pytest.skip(f"no {shell} on this machine")
    checked = subprocess.run([shell, "-n"], input=script(capsys, shell), capture_output=True, text=True, timeout=30)
    assert checked.returncode == 0, checked.stderr


def test_an_unknown_shell_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["completion", "powershell"])
    assert exit_.value.code == 2
    assert "invalid choice: 'powershell'" in capsys.readouterr().err
