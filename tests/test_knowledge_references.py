"""Issue #17: a knowledge entry that names a GPU, model, link or source the catalogue does not hold is
refused, by `advisor rules check` and by every command that would advise on it, with one line naming the
entry and the unknown id (exit 2), never advice resting on an entry that points nowhere.

Each case edits one entry of a copy of the shipped knowledge base, as a maintainer's typo would."""

from __future__ import annotations

import pytest

from tests.editing import edit_once

ASK = ("recommend", "--model", "Llama 3.3 70B", "--gpu", "RTX PRO 6000", "--gpus", "4", "--users", "1")

CASES = [
    # file, old, new, the entry, the unknown id as the line names it
    (
        "measurements.yaml",
        "    gpu: rtx-pro-6000-server\n",
        "    gpu: rtx-pro-7000\n",
        "measurement dl380a-70b-split-four-one-user",
        "names unknown GPU 'rtx-pro-7000'",
    ),
    (
        "measurements.yaml",
        "    model: llama-3.3-70b-instruct\n",
        "    model: llama-9-400b\n",
        "measurement dl380a-70b-split-four-one-user",
        "names unknown model 'llama-9-400b'",
    ),
    (
        "measurements.yaml",
        "    node_link: network-200g\n",
        "    node_link: network-1600g\n",
        "measurement ",
        "names unknown link 'network-1600g'",
    ),
    (
        "failures.yaml",
        "  - source: gh-nccl-342\n",
        "  - source: gh-nccl-3420\n",
        "failure nccl-shm-too-small",
        "cites unknown source 'gh-nccl-3420'",
    ),
    (
        "platforms.yaml",
        "gpu: h200-nvl, gpus_per_node: 2,",
        "gpu: h300-nvl, gpus_per_node: 2,",
        "platform h200-nvl-x2",
        "names unknown GPU 'h300-nvl'",
    ),
]


@pytest.mark.parametrize(("file", "old", "new", "entry", "unknown"), CASES, ids=[c[4] for c in CASES])
def test_an_entry_naming_an_unknown_id_is_refused_in_one_line(cli, knowledge_copy, file, old, new, entry, unknown):
    edit_once(knowledge_copy / file, old, new)
    code, out, err = cli("rules", "check", "--quick")
    assert code == 2 and out == ""
    (line,) = err.strip().splitlines()
    assert entry in line and unknown in line
    assert f"{file}:" in line or entry.startswith("platform")  # a platform row keeps no file:line of its own
    # and no advice rests on it: the same line, exit 2, nothing on stdout
    code, out, err = cli(*ASK)
    assert code == 2 and out == "" and unknown in err and len(err.strip().splitlines()) == 1


def test_two_unknown_ids_are_one_line_that_counts_the_rest(cli, knowledge_copy):
    edit_once(knowledge_copy / "measurements.yaml", *CASES[0][1:3])
    edit_once(knowledge_copy / "failures.yaml", *CASES[3][1:3])
    code, _out, err = cli("rules", "check")
    (line,) = err.strip().splitlines()
    assert code == 2 and "and 1 more unknown id" in line


def test_the_shipped_knowledge_names_only_what_it_holds(cli):
    code, out, _ = cli(*ASK)
    assert code == 0 and "Recommendation:" in out
