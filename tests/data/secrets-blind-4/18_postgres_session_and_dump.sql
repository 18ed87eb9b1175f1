-- We migrated the usage DB from the old VM to the managed cluster with pg_dumpall and now the
-- console users cannot log in (app says "invalid password" for everyone). psql session + dump excerpt.

$ psql "host=pg-usage.internal.example dbname=usage user=migrator sslmode=require"
psql (16.6 (Ubuntu 16.6-1.pgdg24.04+1), server 16.4)
SSL connection (protocol: TLSv1.3, cipher: TLS_AES_256_GCM_SHA384, compression: off, ALPN: postgresql)
usage=> SHOW password_encryption;
 password_encryption
---------------------
 scram-sha-256
(1 row)
usage=> SELECT pid, usename, state, wait_event_type, query_id FROM pg_stat_activity WHERE datname = 'usage';
  pid   |  usename  | state  | wait_event_type |       query_id
--------+-----------+--------+-----------------+----------------------
 418223 | console   | idle   | Client          | -6215491637740201735
 418902 | migrator  | active |                 | 4810347719210482213
(2 rows)
usage=> SELECT pg_current_wal_lsn();
 pg_current_wal_lsn
--------------------
 3A/9F2B41C8

-- ===== excerpt from pg_dumpall --globals-only (old VM) =====
CREATE ROLE console;
ALTER ROLE console WITH NOSUPERUSER INHERIT NOCREATEROLE NOCREATEDB LOGIN NOREPLICATION NOBYPASSRLS PASSWORD 'md5025583f68c0b1f40fac903f551a07d5f';
CREATE ROLE grafana_ro;
ALTER ROLE grafana_ro WITH LOGIN PASSWORD 'SCRAM-SHA-256$4096:<salt>$<storedkey>:<serverkey>';

-- ===== excerpt from pg_dump usage (table public.console_users) =====
COPY public.console_users (id, username, password_hash, hash_scheme, created_at) FROM stdin;
0aa63555-288b-458e-963e-570918a7a2d8	a.kovacs	$argon2id$v=19$m=65536,t=3,p=4$XR/eWUS+BpT1ufvi652VZw$dgRj8z/XxFLpXjg8LbLhA0sQb3vdidSBMxa8wwSWqhs	argon2id	2024-11-02 10:14:55+00
47c1ab5e-3217-4811-9598-bf99b65fb7ec	j.moreau	pbkdf2_sha256$870000$aiLVKlumLAdYLxjxcmPSjB$MdSO1U4azIjSBdiwrp6CDv6UpF6v+X/XC+CKKs4qL+g=	django	2023-06-19 08:01:12+00
68c16b19-1e0b-4788-ba73-c9ca5c4ada25	blog-import	$P$BkeKciP7tNIuC8J8hWsx/IlwGmk1QWi	phpass	2022-02-27 17:45:03+00
18d0f226-d495-41f8-b072-3f462a0a7dff	t.nakamura	$2b$12$l2pUStGUgQOT1HDUaGBAvqutKdupeeDHGEvMlsBlaMQogIfTFzq6I	bcrypt	2024-03-08 22:10:41+00
eb2a31ae-33f1-4a98-89f6-39f79f66847b	legacy-ops	$1$7W054ZNR$IcgFlWUVplDT1ZZq1nCFEZ	md5crypt	2019-09-30 06:00:00+00
d1f9afc9-749c-43eb-b1d9-7f61129685d1	sso-only	!	none	2025-01-15 12:00:00+00
\.

-- ===== the MSSQL side (linked server used by usage-reporter) =====
1> SELECT name, type_desc, is_disabled FROM sys.sql_logins WHERE name LIKE 'usage%';
2> GO
name          type_desc   is_disabled
------------- ----------- -----------
usage_rw      SQL_LOGIN   0
1> SELECT LOGINPROPERTY('usage_rw', 'PasswordHash');
2> GO
0x020091EA663AC72E5C116B54A3A8FB0E8BC971507419ED15B17398C0F532388BD547F00E117E019D40B49B6A923D55F3B9471991D4F0D14B0213A3A3DFD8D92DD2F448AAB937
1> EXEC sp_addlinkedserver @server = N'PGUSAGE', @srvproduct = N'', @provider = N'MSDASQL',
2>   @provstr = N'Driver={PostgreSQL Unicode};Server=pg-usage.internal.example;Port=5432;Database=usage;Uid=mssql_link;Pwd=Tundra.8066pine-bHj;sslmode=require;';
3> GO

-- ===== and trino on top of both, from the analyst's shell =====
$ export TRINO_PASSWORD='Ocelot.35867dune!1S'
$ trino --server https://trino.internal.example:8443 --user analyst --password --catalog pg_usage
trino> SELECT model, sum(prompt_tokens) AS pt, sum(completion_tokens) AS ct FROM usage.public.requests WHERE day >= DATE '2025-05-01' GROUP BY 1 ORDER BY 2 DESC LIMIT 3;
              model               |     pt      |     ct
----------------------------------+-------------+------------
 meta-llama/Llama-3.3-70B-Instruct | 18204471923 | 3120948811
 Qwen/Qwen3-235B-A22B-FP8         |  9821004412 | 2210983312
 deepseek-ai/DeepSeek-V3-0324     |  4410299381 |  901228874
(3 rows)
Query 20250506_091244_00031_k2x7p, FINISHED, 4 nodes
