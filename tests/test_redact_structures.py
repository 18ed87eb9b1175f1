"""What makes a value secret beyond its own name, as a support engineer pastes it: an assignment inside
another value, a login's secret after an e-mail address, a file printed by `cat`, any armoured key block,
a password told in prose in other languages; and what is not secret although it stands beside a credential
word: a digest, a reference, an algorithm, Digest authentication's clear fields, a public key, a version pin,
a base64 body that says nothing secret."""

from __future__ import annotations

import base64

import pytest

from advisor.redact import Redactor

LEAKY = [
    ("Environment=MLFLOW_TRACKING_PASSWORD=8j-9RiJvUCoHHSTryx", "8j-9RiJvUCoHHSTryx"),
    ('Environment="DB_PASS=Qw7!zLm2pXv9" "CUDA_VISIBLE_DEVICES=0,1"', "Qw7!zLm2pXv9"),
    (
        "see: http://localhost:8888/lab?token=9f2c4e1ab7d35c08e6f4a2b19d7c3e5f0a8b6c4d here",
        "9f2c4e1ab7d35c08e6f4a2b19d7c",
    ),
    ("ldap_default_authtok = .zaE-ZliFd0fVkfTZUY!", ".zaE-ZliFd0fVkfTZUY!"),
    ("[smtp.example.net]:587 alerts@mail.example.org:fa87bebd303993d055eb8a95006a7145", "fa87bebd303993d055eb8a9"),
    ("$ cat config/master.key\n3accef4651d3c26a7ae6ee8bb0f65d05\n$ ls", "3accef4651d3c26a7ae6ee8bb0f65d05"),
    (
        "-----BEGIN OpenVPN Static key V1-----\nd15f6d33a4ee4dccd0bfc83772369e98\n-----END OpenVPN Static key V1-----",
        "d15f6d33a4ee4dccd0bfc83772369e98",
    ),
    ("le mot de passe est Renard-Vert-2002 pour le NAS", "Renard-Vert-2002"),
    ("la contraseña es Gato-Azul-1999 gracias", "Gato-Azul-1999"),
    ("het wachtwoord is Blauwe-Kat-91 dank", "Blauwe-Kat-91"),
    ("パスワードは Kitsune-Aka-77 です", "Kitsune-Aka-77"),
    ("密码是 Hong-Hu-88x 谢谢", "Hong-Hu-88x"),
    (
        'Authorization: Digest username="admin", realm="iDRAC", qop=auth, nc=00000001, '
        'response="6629fae49393a05397450978507c4ef1"',
        "6629fae49393a05397450978507c4ef1",
    ),
]
HARMLESS = [
    "--discovery-token-ca-cert-hash sha256:afd39777c9771d7728cf5177206b86e847c401ddbdf58e4a298b73f82bdcc13f",
    "password       = var.db_password",
    "auth_proto: SHA",
    "smtp_sasl_password_maps = hash:/etc/postfix/sasl_passwd",
    "smtp_sasl_auth_enable = yes",
    'realm="iDRAC", qop=auth, nc=00000001',
    "Host: api.postmarkapp.com",
    "- uses: actions/checkout@v4",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIWL4FmyB+21oM2PvC3+B1L4z91lBM38QsMlEOrKy1k6J",
    "payload: " + base64.b64encode(b'{"model":"Qwen/Qwen2.5-7B-Instruct","max_tokens":256}').decode(),
]


@pytest.mark.parametrize(("pasted", "secret"), LEAKY, ids=[s[:18] for _p, s in LEAKY])
def test_the_secret_never_reaches_the_transcript(pasted, secret):
    assert secret not in Redactor().text(pasted)


@pytest.mark.parametrize("pasted", HARMLESS, ids=[p[:24] for p in HARMLESS])
def test_what_is_not_secret_comes_through_unchanged(pasted):
    assert Redactor().text(pasted) == pasted


def test_a_digest_header_keeps_its_clear_fields_and_hides_only_the_response():
    line = LEAKY[-1][0]
    out = Redactor().text(line)
    assert 'realm="iDRAC"' in out and "qop=auth" in out and "6629fae4" not in out


def test_base64_that_decodes_to_a_credential_stays_hidden():
    blob = base64.b64encode(b'{"user": "svc", "password": "Zr8!kq2LmW0p"}').decode()
    assert blob not in Redactor().text(f"payload: {blob}")
