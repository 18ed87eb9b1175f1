# ~/.bash_history from gpu-node-07 (customer pasted it to show what they ran before the crash)
nvidia-smi --query-gpu=name,driver_version,pci.bus_id,memory.total --format=csv
nvidia-smi topo -m
export PGPASSWORD='pgW1nter$Fjord42'
psql -h pg-primary -U inference -d serving -c 'select model, count(*) from requests group by 1'
unset PGPASSWORD
sshpass -p 'h3avyR@in_0verKiel' ssh -o StrictHostKeyChecking=no ops@gpu-node-08 'nvidia-smi -q -d ECC | head -40'
redis-cli -h cache-0 -p 6379 -a 'r3dis-Qu4ntum-Lynx' --no-auth-warning INFO memory
redis-cli -h cache-0 -p 6379 -a 'r3dis-Qu4ntum-Lynx' --no-auth-warning DBSIZE
mysql -h reporting-db -u grafana_ro --password='M3ridian^Vault!19' -e 'SHOW PROCESSLIST'
mongosh "mongodb://mongo-0:27017/admin" --username root --password 'M0ngo#Atlas*Falcon8' --eval 'db.serverStatus().connections'
docker pull lmsysorg/sglang@sha256:cb63949252fe2e04b30c39e19bc20fbf2fe87bdf480281fca37acfa3c4d186f1
python3 -m sglang.launch_server --model-path Qwen/Qwen3-235B-A22B-FP8 --tp 8 --port 30000 --mem-fraction-static 0.88 --context-length 40960 --admin-key adm-XtXAkTrfOoEVCDJqF0LwpzWjyuWP
curl -s localhost:30000/get_server_info | jq .max_total_num_tokens
huggingface-cli download deepseek-ai/DeepSeek-R1 --include '*.safetensors' --local-dir /models/DeepSeek-R1
sha256sum /models/DeepSeek-R1/model-00001-of-000163.safetensors
# d7dc47ead1d93947855cf28a059999f326af3d66a3ded435f3d8d1e6401e3742  model-00001-of-000163.safetensors
ldapsearch -x -H ldaps://ldap.corp -D 'cn=svc-gpu,ou=services,dc=corp' -w 'Ld4pBind!Orion#552' -b 'ou=people,dc=corp' '(uid=mkoch)' memberOf
keytool -importcert -alias corp-root -file corp-root.pem -keystore truststore.jks -storepass 'St0repass-Quokka71' -noprompt
sudo htpasswd -b -c /etc/nginx/.htpasswd metrics 'Htp@ssw0rd-Maple93'
openssl pkcs12 -export -in serving.crt -inkey serving.key -out serving.p12 -passout 'pass:0penSSL^Passin_Kestrel'
wget --http-user=mirror --http-password='Wg3t-Archive!Otter' https://artifacts.internal/wheels/flash_attn-2.7.4.post1-cp312-cp312-linux_x86_64.whl
RSYNC_PASSWORD='Rsync!Backup~Heron5' rsync -av --progress /ckpt/step_12000/ rsync://backup@nas-01/ckpt/step_12000/
cloudflared tunnel --no-autoupdate run --token eyJhIjoiYmYwMWY2NTRkYjM2YWU2ZDhmYjJiMzM1NDk4MWI4OWMiLCJ0IjoiYTFlZDA1YWQtZWExMi00MzJlLTg4ZDctZGM4ZDA5MjIyMDc1IiwicyI6IktxQ2F1ZTZSaDZ2dXlsY0JnMzBXbHZleE1Ta0FLUGZDakxhdVFSZ3pFZ3M9In0=
java -jar jenkins-cli.jar -s https://ci.internal/ -auth deploy:11ca1f16bbf86bf792b6a66763a3d7e4f1 build gpu-nightly -p MODEL=Qwen/Qwen3-235B-A22B-FP8
git -C ~/src/vllm log -1 --format=%H
# 7926374ba38e00bc0a8d576aa5d06076a0bdcd38
git -C ~/src/vllm checkout v0.9.0.1
pip install -e . --no-build-isolation
python3 -m torch.utils.collect_env | grep -i nccl
docker pull nvcr.io/nvidia/pytorch:25.04-py3
docker run --gpus all --ipc=host --ulimit memlock=-1 --rm -it nvcr.io/nvidia/pytorch:25.04-py3 bash
python finetune.py --model RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic --dataset HuggingFaceH4/ultrachat_200k --max_seq_length 8192 --per_device_train_batch_size 2
htop
exit
