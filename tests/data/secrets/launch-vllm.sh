# Planted-secret corpus (constructed for the redaction test; every identifier and secret below is made up).
# A launch script as a customer attaches it: docker run of vLLM across two nodes.
export HF_TOKEN=hf_QaWsEdRfTgYhUjIkOlPzXcVbNm112233
export AWS_ACCESS_KEY_ID=AKIAZ7EXAMPLEKEY1234
export AWS_SECRET_ACCESS_KEY=Xy7/Zq9+Wt3LmN8pR2sT5vU1wX4yZ6aB0cD2eF4g
export MASTER_ADDR=trainbox-07.internal.example.net
export NCCL_SOCKET_IFNAME=eth0 NCCL_P2P_LEVEL=PHB NCCL_IB_DISABLE=1
docker login -u deploybot -p Dckr-Pass-4471 registry.example-customer.com
docker run --gpus all --ipc=host -e HF_TOKEN=$HF_TOKEN -v /home/kpatel/hf-cache:/root/.cache/huggingface \
  vllm/vllm-openai:v0.10.1 --model meta-llama/Llama-3.3-70B-Instruct --tensor-parallel-size 2 \
  --max-model-len 8192 --gpu-memory-utilization 0.9 --api-key vllm-key-8f3e2a1b9c \
  --host 0.0.0.0 --port 8000
curl -H "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJrcGF0ZWwifQ.c2lnbmF0dXJlMTIzNDU2" http://172.16.5.9:8000/v1/models
curl -H "X-API-Key: key-5a4b3c2d1e0f" https://user1:Sup3rS3cret@proxy.example-customer.com/v1/chat
