"""Secrets by meaning, not by shape (issue #25): a value is hidden because of the name that holds it, its
structure or its randomness, in whatever syntax a customer pastes; the catalogue's names, versions and
digests a ticket needs are never touched. Each case is written as a customer would paste it, and none
uses a vendor prefix the redactor knows, unless the case is about the prefix."""

from __future__ import annotations

import pytest

from advisor import transcripts as t
from advisor.core.engine import Engine
from advisor.redact import Redactor

# (pasted, the secret that must not come through): by the name that holds the value, in any syntax
BY_NAME = [
    ('{"accessToken": "q8Zr2LwX9tPc", "refreshToken": "r7Yd1KmN4vQs"}', "q8Zr2LwX9tPc"),
    ('{"accessToken": "q8Zr2LwX9tPc", "refreshToken": "r7Yd1KmN4vQs"}', "r7Yd1KmN4vQs"),
    ('{"clientSecret": "plain-words-secret"}', "plain-words-secret"),
    ("client_secret: 0a9b8c7d6e5f", "0a9b8c7d6e5f"),
    ("VLLM_DB_PW=hunter22", "hunter22"),
    ("VLLM_SIGNING_KEY=swordfish-77", "swordfish-77"),
    ("vllm serve m --admin-key Gx7-admin-key", "Gx7-admin-key"),
    ("python train.py --hf_token=abcdEFGH1234", "abcdEFGH1234"),
    ("ADMIN_PASSWORD='correct horse battery staple'", "correct horse battery staple"),
    ("[database]\npassword = two words here", "two words here"),
    ('db_password = "toml-pass-42"', "toml-pass-42"),
    ("Server=tcp:db1;User ID=sa;Password=Conn$tr1ng;Encrypt=true", "Conn$tr1ng"),
    ("https://storage.example.com/b/o?X-Amz-Signature=9f8e7d6c5b4a39281716&x=1", "9f8e7d6c5b4a39281716"),
    ("https://api.example.com/v1?api_key=k3yInTheQuery&limit=5", "k3yInTheQuery"),
    ("Ocp-Apim-Subscription-Key: 1a2b3c4d5e6f7a8b", "1a2b3c4d5e6f7a8b"),
    ("Cookie: sessionid=s3ss10nV4lue; csrftoken=CsRf99", "s3ss10nV4lue"),
    ("- name: DB_PASSWORD\n  value: kube-env-pw-3", "kube-env-pw-3"),
    ('{"name": "API_TOKEN", "value": "ecs-task-def-77"}', "ecs-task-def-77"),
    ('<add key="ClearTextPassword" value="nuget-pw-9" />', "nuget-pw-9"),
    ('os.environ["OPENAI_API_KEY"] = "py-env-value-5"', "py-env-value-5"),
    ("ENV HF_TOKEN dockerfile-token-6", "dockerfile-token-6"),
    ("setx WANDB_API_KEY windows-setx-8", "windows-setx-8"),
    ("$env:GITHUB_TOKEN='ps-token-value-4'", "ps-token-value-4"),
    ('{"username": "kaggler", "key": "0123456789abcdef0123456789abcdef"}', "0123456789abcdef0123456789abcdef"),
    ("machine api.wandb.ai\n  login user\n  password 9a8b7c6d5e4f3a2b1c0d", "9a8b7c6d5e4f3a2b1c0d"),
    (
        "private_key: |\n  MIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\n  more lines\nnext: 1",
        "more lines",
    ),
]

# by the command whose option takes it
BY_COMMAND = [
    ("sshpass -p 'Ss4Pass!' ssh ops@10.0.0.5", "Ss4Pass!"),
    ("redis-cli -h cache -a r3disPass ping", "r3disPass"),
    ("mysql -u root -p'My!Sql#7' inference", "My!Sql#7"),
    ("mysql -u root -pMySq1Attached inference", "MySq1Attached"),
    ("docker login -u bot --password D0ck3rPw registry.local", "D0ck3rPw"),
    ("openssl pkcs12 -export -passout pass:p12-export-pw -out a.p12", "p12-export-pw"),
    ("keytool -list -keystore ks.jks -storepass st0re-pass", "st0re-pass"),
    ("wandb login 6f5e4d3c2b1a09f8e7d6c5b4a3928170f6e5d4c3", "6f5e4d3c2b1a09f8e7d6c5b4a3928170f6e5d4c3"),
    ("poetry config http-basic.internal deploy Pl41n.Pos1t10nal", "Pl41n.Pos1t10nal"),
    ("$ pdo = new PDO('mysql:host=db;dbname=recs', 'recs', 'Positional-Pw9');", "Positional-Pw9"),
    ('auth = requests.auth.HTTPBasicAuth("svc", "b4sic-in-code")', "b4sic-in-code"),
    ("$ headscale preauthkeys create --user gpu\n7f0c2a9e4b1d8c3f6a5e2b9d0c7f4a1e8b3d6c9f2a5e\n", "7f0c2a9e4b1d"),
    ("$ wg genkey\nyGx3Ls9kQ2m8Wb5Zr1Pt7Nc4Vd6Hf0Ja2Ke8Lu3Mo5=\n", "yGx3Ls9kQ2m8Wb5Zr1Pt7Nc4Vd6Hf0Ja2Ke8Lu3Mo5="),
]

# by structure, randomness or prose
BY_STRUCTURE = [
    ("git clone https://oauth2:tok3nInUserinfo@gitlab.example.com/a/b.git", "tok3nInUserinfo"),
    ("remote: https://RaNd0mT0k3nAsUs3rN4m3xy@github.com/org/repo", "RaNd0mT0k3nAsUs3rN4m3xy"),
    ("Authorization: Token aB3dE6gH9jK2mN5p", "aB3dE6gH9jK2mN5p"),
    ("sent Bearer Zq81Lm2Nx7Pw4Kr9 to the gateway", "Zq81Lm2Nx7Pw4Kr9"),
    ("refresh=1//0gLq8Tz-Yw3Nd7Kp_2Vx5Rm9Cs4Bf6Hj1Lu8Ie", "1//0gLq8Tz-Yw3Nd7Kp_2Vx5Rm9Cs4Bf6Hj1Lu8Ie"),
    ("log: using credential 7Hq2Lm9Xz4Kp1Rw8Tn5Vc3Bd6Fy0Gs", "7Hq2Lm9Xz4Kp1Rw8Tn5Vc3Bd6Fy0Gs"),
    ("echo ZXhhbXBsZTpzM2NyM3RWYWx1ZTEyMzQ1Ng== | base64 -d", "ZXhhbXBsZTpzM2NyM3RWYWx1ZTEyMzQ1Ng=="),
    ("the password is Tr0ub4dor&3", "Tr0ub4dor&3"),
    ("his pw is now Winter2024!", "Winter2024"),
    ("das Passwort lautet Sommer2024", "Sommer2024"),
    ("Kennwort: „Geheim-42“", "Geheim-42"),
    (
        "PuTTY-User-Key-File-3: ssh-ed25519\nPrivate-Lines: 1\n"
        "AAAAIHByaXZhdGVrZXlieXRlc2hlcmVwcml2YXRl\nPrivate-MAC: 0a1b2c",
        "AAAAIHByaXZhdGVrZXlieXRlc2hlcmVwcml2YXRl",
    ),
    ("kind: Secret\nmetadata:\n  name: s\nstringData:\n  config: plain-in-secret-doc\n", "plain-in-secret-doc"),
    ('{"msg": "{\\"password\\": \\"json-in-json-pw\\"}"}', "json-in-json-pw"),
    ("<config><password>xml-pw-9</password><ns:ClientSecret>cs-abc-1</ns:ClientSecret></config>", "cs-abc-1"),
    ("db.internal:5432:inference:svc:pgpass-secret-1", "pgpass-secret-1"),
    ("api_keys:\n  - first-key-abc1\n  - second-key-def2\nother: 1\n", "second-key-def2"),
    (
        "$ANSIBLE_VAULT;1.1;AES256\n6231336539666234306139346433616338376437376461363365\nnext: x",
        "62313365396662343061",
    ),
    ("CREATE USER app IDENTIFIED BY 'Ora-pw-77';", "Ora-pw-77"),
    ("| svc | % | mysql_native_password | *0D3CED9BEC10A777AEC23CCC353A8C08A633045E |", "0D3CED9BEC10A777"),
    ('"mnemonic": "abandon ability able about above absent absorb abstract absurd abuse access accident"', "abandon"),
    ("der API-Key im Worker ist 9c1f5e7a3b2d4c6e8f0a1b3c5d7e9f2a4b6c8d0e", "9c1f5e7a3b2d"),
    ("Parameters:\n  DbPassword:\n    Type: String\n    Default: Cf-Def4ult-Pw\n", "Cf-Def4ult-Pw"),
    ('variable "db_password" {\n  type    = string\n  default = "Tf-def4ult-pw"\n}', "Tf-def4ult-pw"),
    ("the password is sunshine", "sunshine"),
    ("ldapsearch -x -D 'cn=svc' -w 'Ld4p!Bind#5' -b 'ou=people'", "Ld4p!Bind#5"),
    ("sudo htpasswd -b -c /etc/nginx/.htpasswd metrics 'Htp@ssw0rd-9x'", "Htp@ssw0rd-9x"),
    ("https://discord.com/api/webhooks/123456789012345678/abcDEFghiJKLmnoPQRstuVWXyz0123456789", "abcDEFghiJKL"),
    ("https://acme.webhook.office.com/webhookb2/x/IncomingWebhook/45741f41a97176eac2c399bba7217d04/y", "45741f41a971"),
    (
        '{"airtable": {"pat": "patLbxhU1HovbvxOK.a7d0afefef2dd8cea7d64765c45f62c146396dd3faf9023faa70b02ab3af0080"}}',
        "patLbxhU1",
    ),
]

# harmless values of the kinds that were masked before (issue #25: 12 of 37); each must come through whole
HARMLESS = [
    "host Llama-3.3-70B-Instruct on two H100",
    "vllm serve RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic --tensor-parallel-size 2",
    "image: vllm/vllm-openai@sha256:7d5f0a1c2b3e4d5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f",
    "TensorRT 10.3.0.26 with CUDA 12.6",
    "pip install tensorrt==10.3.0.26",
    "libnccl2=2.21.5-1+cuda12.4 libnccl-dev=2.21.5-1+cuda12.4",
    "Driver Version: 570.133.20     CUDA Version: 12.8",
    "Qwen/Qwen3-235B-A22B-Instruct-2507-FP8 on 8 x H200",
    "architectures: [Qwen3MoeForCausalLM, Llama4ForConditionalGeneration, DeepSeekV3ForCausalLM]",
    "--kv-cache-dtype fp8 --max-model-len 32768 --gpu-memory-utilization 0.92 --max-num-batched-tokens 8192",
    "max_tokens: 4096, tokens_per_second: 31.5, time per token: 35.2 ms",
    '"bos_token_id": 128000, "eos_token": "<|eot_id|>", "tokenizer_class": "PreTrainedTokenizerFast"',
    "key_cache_dtype: fp8_e4m3, key: hf_token, secretKeyRef: {name: hf-secret, key: HF_TOKEN}",
    "commit 3f2a9c8e1b7d4f6a0c5e9b2d7f1a4c8e6b0d3f95 (HEAD -> main)",
    '"rule_base_hash": "d8b6bcc0deb86204", "sha256": "9f86d081884c7d659a2feaa0c55ad015"',
    "NCCL INFO Channel 01/1 : 0[0] -> 8[0] [send] via NET/IB/9/GDRDMA/Shared",
    "NCCL_P2P_LEVEL=NVL NCCL_IB_HCA=mlx5_0,mlx5_1 NCCL_SOCKET_IFNAME=eth0",
    "How many all-reduces per token: 80 or 160 for an 80-layer model?",
    "auth_type: bearer, token_url: https://login.microsoftonline.com/token, password_file: /run/secrets/db",
    "docker login --password-stdin nvcr.io",
    "HF_TOKEN=$HF_TOKEN OPENAI_API_KEY=${OPENAI_API_KEY} token: <your-token>",
    "0000:3b:00.0 NVIDIA H100 80GB HBM3, GPU0 NV18 GPU1",
    "> Host: api.github.com\n< Host: us-central1-aiplatform.googleapis.com\nrepository = https://test.pypi.org/legacy/",
    'the password is wrong; "P2P=Enabled" bandwidth equals "P2P=Disabled"',
    "experts key is num_local_experts (=128)",
    "STRIPE_PUBLISHABLE_KEY=pk_live_51Hq8Zr2LwX9tPcAbCdEfGhIjKlMnOp",
    "projectApiKey: phc_SBcPOG8jGgDfMEwCfSpyk69gbQ3h4V4LdZUHsrIs",
    "Parameters:\n  RecaptchaSiteKey:\n    Type: String\n    Default: 6LcX2aUpAAAAAJ9v8Qz3Lw7Rt1Ym5Nk0Pb4Sd6Fh\n",
    "algoliaSearchOnlyKey: 4f9e2c7a1b8d3e6f0a5c9b2d7e4f1a8c",
    '"address": "0x52908400098527886E0F7030069857D2E4169EE7"',
    '{"kty": "EC", "crv": "P-256", "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",'
    ' "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}',
    "$ cat ~/.minisign/minisign.pub\nuntrusted comment: minisign public key 1A2B3C4D\n"
    "RWQf6LRCGA9i53mlYecO4IzT51TGPpvWucNSCh1CBM0QTaLn73Y7GFO3\n",
    "&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256",
    "MESSENGER_TRANSPORT_DSN=doctrine://default?auto_setup=0",
    "Cookie: lang=de; JSESSIONID.routing=node2",
    'AIRFLOW__WEBSERVER__SECRET_KEY_CMD: "cat /run/secrets/airflow_webserver_key"',
    "    secrets:\n      - airflow_webserver_key\n",
    "kind: Secret\nstringData:\n  AUTHENTICATION_APIKEY_USERS: rag-service\n",
]


@pytest.mark.parametrize(("pasted", "secret"), BY_NAME + BY_COMMAND + BY_STRUCTURE)
def test_a_secret_in_any_syntax_is_hidden(pasted, secret):
    out = Redactor().text(pasted)
    assert secret not in out, out
    assert "secret-1" in out


@pytest.mark.parametrize("text", HARMLESS)
def test_a_harmless_technical_value_comes_through_whole(text):
    assert Redactor().text(text) == text


def test_what_the_customer_typed_does_not_teach_the_redactor_to_mask_the_advisors_launch_line(tmp_path):
    """The review's case: "host Llama-3.3-70B-Instruct on two H100" made `Llama-3` a host name, and the
    recorded launch line read `vllm serve RedHatAI/host-6.3-70B-...`."""
    rec = t.Recorder.start("chat", Engine.load(), tmp_path)
    rec.turn("host Llama-3.3-70B-Instruct on two H100 at node gpu-a17", "noted")
    rec.turn("give me the command", "vllm serve RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic --tensor-parallel-size 2")
    md, _js = rec.close()
    written = md.read_text()
    assert "vllm serve RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic --tensor-parallel-size 2" in written
    assert "gpu-a17" not in written and "host-1" in written


def test_a_lowercased_echo_of_a_secret_is_hidden_as_well():
    """A reply that echoes what was typed in lower case ("unknown precision 'hf_...'") still hides it."""
    r = Redactor()
    said = r.text("precision = Zq81Lm2Nx7Pw4Kr9Ab3dE6gH")
    echoed = r.text("Not accepted: unknown precision 'zq81lm2nx7pw4kr9ab3de6gh'")
    assert "Zq81" not in said and "zq81lm2nx7pw4kr9ab3de6gh" not in echoed
