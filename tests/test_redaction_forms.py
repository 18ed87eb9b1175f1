"""A customer pastes lines where a secret is shown by the form around it, not by a name the assignment
readers know: a pipe into a command that reads its secret from stdin, a (user, password) pair, a switch's
typed secret, a Hadoop property, a login call, a password in a sentence in Hindi or Thai, a signed request.
The redactor hides the secret and leaves the rest of the line as the customer wrote it.
(Every value below is made up for the test.)"""

from __future__ import annotations

import pytest

from advisor.redact import Redactor

HIDDEN = [
    # a pipe or a here string into a command that reads its secret from standard input (its man page)
    ("echo 'slurm:Marble-Otter-4471' | sudo chpasswd", "Marble-Otter-4471", "echo 'slurm:"),
    (
        "echo -n 'LanternQuokka2024+31' | sudo cryptsetup luksOpen /dev/nvme1n1 data --key-file=-",
        "LanternQuokka2024+31",
        "cryptsetup luksOpen /dev/nvme1n1",
    ),
    (
        "echo Zq7vPw2LmN4xRt8K | docker login registry.example.org -u ci --password-stdin",
        "Zq7vPw2LmN4xRt8K",
        "--password-stdin",
    ),
    ("printf '%s' 'Copper#Fjord88' | podman login quay.io -u bot --password-stdin", "Copper#Fjord88", "podman login"),
    ("chpasswd <<< 'root:Velvet-Raven-902'", "Velvet-Raven-902", "chpasswd"),
    # a credential's name given a (user, password) pair: Gradio's and requests' auth=, opensearch-py's http_auth
    ('demo.launch(server_port=7860, auth=("demo", "Tundra-Basalt-5521"))', "Tundra-Basalt-5521", 'auth=("demo"'),
    (
        "client = OpenSearch(hosts=[host], http_auth=['admin', 'Quartz!Heron71'])",
        "Quartz!Heron71",
        "http_auth=['admin'",
    ),
    # a network device's typed secret: IOS type 7, type 0 (plain), type 5 (MD5-crypt)
    ("username netops privilege 15 password 7 0822455D0A165B1E1F0A", "0822455D0A165B1E1F0A", "password 7 "),
    ("tacacs-server key 0 Glacier-Moth-33", "Glacier-Moth-33", "tacacs-server key 0 "),
    ("enable secret 5 $1$mERr$hx5rVt7rPNoS4wqbXKX7m0", "$1$mERr$hx5rVt7rPNoS4wqbXKX7m0", "enable secret 5 "),
    # a login setting holding user:secret (squid's cache_peer)
    (
        "cache_peer proxy.corp.example.com parent 3128 0 no-query login=gpuproxy:Ember-Walnut77@",
        "Ember-Walnut77@",
        "login=gpuproxy:",
    ),
    # a property whose value its sibling names: Hive's hive-site.xml, a servlet's web.xml
    (
        "<property><name>javax.jdo.option.ConnectionPassword</name><value>581^Cedar-Cedar</value></property>",
        "581^Cedar-Cedar",
        "<name>javax.jdo.option.ConnectionPassword</name>",
    ),
    (
        "<context-param><param-name>db.password</param-name><param-value>Winter2031!</param-value></context-param>",
        "Winter2031!",
        "<param-name>db.password</param-name>",
    ),
    # calls that take a password by its place: login(user, password), DBI->connect(dsn, user, password)
    ("bsky.login('lab.bsky.social', 'kq4z-p2fu-wubn-zmlx')", "kq4z-p2fu-wubn-zmlx", "bsky.login('"),
    ('my $dbh = DBI->connect("DBI:Pg:dbname=billing", "report", \'Saddle2029-41\');', "Saddle2029-41", "DBI->connect("),
    # PHP's define() with the value aligned far to the right (WordPress's salts)
    (
        "define( 'AUTH_KEY',           'x8~GS0CK<P8[`w.43nK/|b@Qt2,gi+=uFxcS!;Hek$Ha28J' );",
        "x8~GS0CK<P8[`w.43nK/|b@Qt2,gi+=uFxcS!;Hek$Ha28J",
        "define( 'AUTH_KEY',",
    ),
    # names whose last words are what they are, and values that hold a "=" or a "#"
    (
        "LABEL_STUDIO_API_KEY=3f5c1e0a9b7d2468ace013579bdf2468ace01357",
        "3f5c1e0a9b7d2468ace013579bdf2468ace01357",
        "LABEL_STUDIO_API_KEY=",
    ),
    (
        "  - OPENSEARCH_INITIAL_ADMIN_PASSWORD=q=Lm4kR3085zIe?GA",
        "q=Lm4kR3085zIe?GA",
        "OPENSEARCH_INITIAL_ADMIN_PASSWORD=",
    ),
    ("rootpw --plaintext Comet#Willow2210.", "Comet#Willow2210.", "rootpw --plaintext "),
    ("remotepass = 7HQR4HEEMukZGH*2", "7HQR4HEEMukZGH*2", "remotepass = "),
    # a bare `key` that the key above qualifies (Magento's crypt key)
    (
        "return [\n    'crypt' => [\n        'key' => '0bcd5777346a56530a1e81cf08d3ed5d'\n    ],",
        "0bcd5777346a56530a1e81cf08d3ed5d",
        "'crypt' => [",
    ),
    # database shells' password options (Vertica's vsql -w, ClickHouse, Cassandra)
    (
        "$ vsql -h dw.corp.internal -U dbadmin -w 'qs8dLbA+PwlpJ_4jwZ' -d warehouse",
        "qs8dLbA+PwlpJ_4jwZ",
        "-d warehouse",
    ),
    ("cqlsh cass-0 -u cassandra -p Birch_Lynx_4410", "Birch_Lynx_4410", "cqlsh"),
    # a key that stands in a URL's path (a capability URL), a Blockfrost project id by its prefix
    (
        "value: https://cronitor.link/p/12cffe0abfdc70542db0b2ccd1c3ba37/gpu-nightly",
        "12cffe0abfdc70542db0b2ccd1c3ba37",
        "/gpu-nightly",
    ),
    ('project_id: "mainnetQRJuDZKwH5RUibvsiBSu2GWodgciP9Kx"', "mainnetQRJuDZKwH5RUibvsiBSu2GWodgciP9Kx", "project_id"),
    # a password holding "=" in a sentence; a colon after the sentence's words (Hungarian, Hebrew, Finnish)
    ("A root jelszó a head node-on: gQx_45GeZNp=DSEoy — nyugodtan", "gQx_45GeZNp=DSEoy", "head node-on: "),
    ("שלום, הסיסמה של משתמש ADMIN ב-BMC של השרת היא Y0=xgyRAQUEiac — תוכלו", "Y0=xgyRAQUEiac", "ADMIN"),
    ("Palvelimen salasana on kTyh=0Cgrz9B4BM ja käyttäjätunnus on admin", "kTyh=0Cgrz9B4BM", "käyttäjätunnus"),
    # an assignment aligned in a column (terraform fmt), a Scale AI key by its prefix
    ('  password             = "Garnet4340+Breeze"', "Garnet4340+Breeze", "password             = "),
    (
        'client = scaleapi.ScaleClient("live_b4ec24e055e93dc0f2b57ec2133d40b6")',
        "live_b4ec24e055e93dc0f2b57ec2133d40b6",
        "ScaleClient(",
    ),
    # a key in a sentence in Turkish and French
    (
        "Sağlayıcının API gizli anahtarı şu: bdf6dbdaba8c828e61ca96df1a3ea29659056fb6",
        "bdf6dbdaba8c828e61ca96df1a3ea29659056fb6",
        "gizli anahtarı",
    ),
    (
        "La clé pré-partagée du VPN est tin.carbon.lagoon.ember.78 – identique",
        "tin.carbon.lagoon.ember.78",
        "du VPN est ",
    ),
    # a password in a sentence: Hindi, Arabic, Thai, Greek, Indonesian
    ("नमस्ते, staging VM का पासवर्ड nadi4471_Nadi है, कृपया", "nadi4471_Nadi", "staging VM का पासवर्ड "),
    ("مرحباً، كلمة المرور لحساب المراقبة هي Sahra2022-19 ويرجى", "Sahra2022-19", "كلمة المرور"),
    ("รหัสผ่านของเครื่อง render คือ krabi3311Talay ครับ", "krabi3311Talay", "render คือ "),
    ("ο κωδικός για το Grafana είναι Lefka2017@44 — ευχαριστώ", "Lefka2017@44", "για το Grafana είναι "),
    (
        "Akun admin: dewi.ops, kata sandinya mawar!0mbak@2031. Driver 550.127.05",
        "mawar!0mbak@2031",
        "Driver 550.127.05",
    ),
    # more readers of stdin: zfs load-key, podman secret create NAME -
    ("sudo zfs load-key tank/models <<< 'Harbor-Lynx-7735'", "Harbor-Lynx-7735", "zfs load-key tank/models"),
    ("printf '%s' 'Sable+Comet-2204' | podman secret create db_pw -", "Sable+Comet-2204", "podman secret create db_pw"),
    # a command's option after another command's name among its words (gh secret set NAME --body X)
    (
        "gh secret set DEPLOY_TOKEN --repo acme/infra --body 'Lattice-Wren-6610-x'",
        "Lattice-Wren-6610-x",
        "--repo acme/infra",
    ),
    (r'.\PsExec64.exe \\render-02 -u CORP\svc -p "Ivory-Gecko-418" -h nvidia-smi', "Ivory-Gecko-418", "-h nvidia-smi"),
    (
        "anaconda -t ab-1f2e3d4c-5b6a-7980-a1b2-c3d4e5f60718 upload dist/pkg.conda",
        "1f2e3d4c-5b6a",
        "upload dist/pkg.conda",
    ),
    # an argument by its place: BTEQ's .LOGON tdpid/user,password; ZooKeeper's addauth digest user:password
    (".logon tdp1.example/etl,Mosaic-Pike-91", "Mosaic-Pike-91", ".logon "),
    ("addauth digest kafka-admin:Tidal-Finch-3380", "Tidal-Finch-3380", "addauth digest "),
    # of microk8s join HOST:PORT/TOKEN/HASH only the token: the hash names the cluster's certificate
    (
        "microk8s join 10.0.0.5:25000/5d41402abc4b2a76b9719d911017c592/6f1ed002ab55 --worker",
        "5d41402abc4b2a76b9719d911017c592",
        "/6f1ed002ab55 --worker",
    ),
    # a push monitor's key in a URL's path (Uptime Kuma /api/push/<token>)
    ("curl -fsS 'https://kuma.acme-gpu.net/api/push/Qm7xK2pW9z?status=up'", "Qm7xK2pW9z", "/api/push/"),
    # prose in Catalan and API-key phrases in Spanish and Portuguese
    ("L'usuari és admin i la contrasenya és Garnet!Heron55, però no entra.", "Garnet!Heron55", "L'usuari és admin"),
    (
        "El token de la API de lectura es c0ffee1234abcd5678ef90, está en el pipeline.",
        "c0ffee1234abcd5678ef90",
        "El token de la API",
    ),
    (
        "A chave de API do serviço de e-mail é 9a8b7c6d5e4f30211203f4e5d6c7b8a9.",
        "9a8b7c6d5e4f30211203f4e5d6c7b8a9",
        "A chave de API",
    ),
    # a verb-final sentence: the copula after the value (Persian)
    ("سلام، رمز عبور من Dune7-Marlin!x است و نام کاربری admin.", "Dune7-Marlin!x", "نام کاربری admin"),
]


@pytest.mark.parametrize(("pasted", "secret", "kept"), HIDDEN)
def test_a_secret_shown_by_its_form_is_hidden_and_the_line_kept(pasted, secret, kept):
    clean = Redactor().text(pasted)
    assert secret not in clean
    assert kept in clean


KEPT = [
    # a pipe into a command that reads no secret
    ("echo hello-world-2031 | grep hello", "hello-world-2031"),
    # a sentence, not a typed secret
    ("retry the password 2 times, then key 1 of 4", "password 2 times"),
    # a Hadoop property that is no credential
    ("<property><name>dfs.replication</name><value>3</value></property>", "<value>3</value>"),
    # settings around "password" that are no password: msmtp's passwordeval, PHP's password_hash
    (
        'passwordeval "gpg --quiet --for-your-eyes-only --no-tty --decrypt ~/.msmtp-password.gpg"',
        "gpg --quiet --for-your-eyes-only",
    ),
    ("$hash = password_hash($plain, PASSWORD_ARGON2ID);", "password_hash($plain, PASSWORD_ARGON2ID)"),
    # what points to a secret: Helm's existingSecret, Jenkins' credentialsId, BuildKit's --secret spec
    ("      existingSecret: inference-redis", "existingSecret: inference-redis"),
    ("withCredentials([string(credentialsId: 'sonar-global', variable: 'SONAR_TOKEN')])", "'sonar-global'"),
    ("docker buildx build --secret id=hf,env=HF_TOKEN .", "--secret id=hf,env=HF_TOKEN"),
    # a key's fingerprint given to gpg, a firmware version, a setting after a comment about rotation
    ("gpg --recv-keys 7B4E2F1A9C3D5E6F7A8B9C0D1E2F3A4B5C6D7E8F", "7B4E2F1A9C3D5E6F7A8B9C0D1E2F3A4B5C6D7E8F"),
    ("Server: iDRAC9 7.10.50.00", "iDRAC9 7.10.50.00"),
    ("# rotate via 1Password: op://platform/.env/\nNODE_ENV=production", "NODE_ENV=production"),
    # a key's id, a stored secret's ARN, where Drone takes a secret from, a WireGuard public key
    ('RAZORPAY_KEY_ID = "rzp_live_R9Z7tvqX2BPgZ1"  # public, goes to checkout.js', "rzp_live_R9Z7tvqX2BPgZ1"),
    (
        'db_secret_arn = "arn:aws:secretsmanager:eu-central-1:123456789012:secret:prod/dns-WFLK9G"',
        "arn:aws:secretsmanager:eu-central-1:123456789012:secret:prod/dns-WFLK9G",
    ),
    ("      password:\n        from_secret: registry_password", "from_secret: registry_password"),
    ("  public key: 9sW3MqZvWWbKtJPUyDGPzODVCQzLy4H2YYYJo05hlW8=", "9sW3MqZvWWbKtJPUyDGPzODVCQzLy4H2YYYJo05hlW8="),
    # a key file at the end of a path, a client id after ["client_id"] =, a template, a placeholder, a
    # publishable key named in a sentence, a sentence about a USB key
    ("--tls-keyfile /etc/ssl/private/comfy.lab.key", "/etc/ssl/private/comfy.lab.key"),
    (
        '    ["client_id"]     = "3MVG9O.hQpPW7l._.F3xKSJWLY_B9bBR_h3fyKgneycGBScESZJ_b.xIKywTc_iLZ_Z84YE7JRpkBWJQ"',
        "3MVG9O.hQpPW7l._.F3xKSJWLY_B9bBR_h3fyKgneycGBScESZJ_b.xIKywTc_iLZ_Z84YE7JRpkBWJQ",
    ),
    (
        "    pw: \"{{ lookup('community.hashi_vault.hashi_vault', 'secret=kv/data/ipmi:password') }}\"",
        "'secret=kv/data/ipmi:password'",
    ),
    ("      - SENTRY_DSN=REPLACE_ME_FROM_VAULT", "SENTRY_DSN=REPLACE_ME_FROM_VAULT"),
    ("클라이언트 키는 live_ck_E5GePWvyJnrK0W0k6q8gLzN97Eoq 입니다.", "live_ck_E5GePWvyJnrK0W0k6q8gLzN97Eoq"),
    ("La clé USB est branchée sur le nœud 3.", "La clé USB est branchée"),
    # a commit in a code host's URL, a run's id after runs/
    (
        "see https://github.com/vllm-project/vllm/commit/8b6be37bc7b9e2ef67a0dba1c566ce5cb77b6ca9",
        "8b6be37bc7b9e2ef67a0dba1c566ce5cb77b6ca9",
    ),
    # a job variable's name in prose, a Bot user's name before an option
    ('echo "job token CI_JOB_TOKEN=[MASKED]"', "CI_JOB_TOKEN=[MASKED]"),
    ("docker login ghcr.io -u bot --password-stdin", "--password-stdin"),
    # gh secret list names no secret; a ping to a short path word is no key
    ("gh secret list --repo acme/infra", "gh secret list --repo acme/infra"),
    ("curl https://status.example.net/api/push/", "api/push/"),
    # a verb-final sentence whose word after the name is no password ('correct')
    ("رمز عبور من درست است", "رمز عبور من درست است"),
]


@pytest.mark.parametrize(("pasted", "kept"), KEPT)
def test_a_harmless_line_comes_through_unchanged(pasted, kept):
    assert kept in Redactor().text(pasted)


def test_a_signed_request_keeps_what_its_specification_sends_in_the_clear():
    sigv4 = (
        "Authorization: AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261121/eu-west-1/s3/aws4_request, "
        "SignedHeaders=host;x-amz-content-sha256;x-amz-date, "
        "Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"
    )
    clean = Redactor().text(sigv4)
    assert "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7" not in clean
    assert "SignedHeaders=host;x-amz-content-sha256;x-amz-date" in clean
    assert clean.startswith("Authorization: AWS4-HMAC-SHA256 Credential=")
    digest = (
        'Authorization: Digest username="bob", realm="api", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", '
        'uri="/x", response="6629fae49393a05397450978507c4ef1"'
    )
    clean = Redactor().text(digest)
    assert "6629fae49393a05397450978507c4ef1" not in clean
    assert 'nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093"' in clean


def test_a_credential_that_is_a_signed_query_loses_only_its_signature():
    pasted = (
        "- name: rds_token\n"
        '  value: "db.example.internal:5432/?Action=connect&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=900'
        '&X-Amz-Signature=8bc97ef4e7e916cf788ed60b903dc7f5d5f7d6bada6aaef68a251c1f26c4bb00"'
    )
    redactor = Redactor()
    clean = redactor.text(pasted)
    assert "8bc97ef4e7e916cf788ed60b903dc7f5d5f7d6bada6aaef68a251c1f26c4bb00" not in clean
    assert "X-Amz-Algorithm=AWS4-HMAC-SHA256" in clean and "X-Amz-Expires=900" in clean
    assert redactor.text(clean) == clean  # a transcript redacted again (a later turn taught more) stays


def test_a_dsn_loses_its_secret_half_and_a_tls_secret_keeps_its_certificate():
    clean = Redactor().text(
        "SENTRY_DSN: https://0f1e2d3c4b5a69788796a5b4c3d2e1f0:9e8d7c6b5a4938271605f4e3d2c1b0a9@sentry.example.org/14"
    )
    assert "9e8d7c6b5a4938271605f4e3d2c1b0a9" not in clean
    assert clean.endswith("/14")
    cert = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJmekNDQVNTZ0F3SUJBZ0lVYmdUTlVOUURwTXg3SXFEQmJ5OVlBTUtqSDl3"
    secret = (
        "apiVersion: v1\nkind: Secret\ntype: kubernetes.io/tls\ndata:\n"
        f"  tls.crt: {cert}\n  tls.key: c2VjcmV0LWtleS1ieXRlcw==\n"
    )
    clean = Redactor().text(secret)
    assert cert in clean and "c2VjcmV0LWtleS1ieXRlcw==" not in clean
