# router.py -- falls back from our Triton cluster to external providers when queue depth > 200.
# The Yandex branch raises 401 "Unknown api key" even though the key works with curl. Whole file:
import base64
import json
import os
import time
import uuid

import httpx
import tritonclient.grpc.aio as grpcclient
from openai import AsyncOpenAI

TRITON_URL = os.environ.get("TRITON_URL", "triton.llm-serving.svc:8001")
MODEL_NAME = "ensemble_qwen72b"
MAX_TOKENS = 1024
QUEUE_DEPTH_LIMIT = 200

# TODO(ops): move all of these to the secret store
YANDEX_API_KEY = "AQVNJd2Kc92bauFntrUawt_KNxG6uSlfFwHpS8wu"
YANDEX_FOLDER = "b1g2h3j4k5l6m7n8p9q0"
GIGACHAT_AUTH_KEY = "OWFjN2Y3ZjItMWQ5NC00YTU3LWIxM2MtNGZmNDdjMTZmYmE2OjdjNzVkZWM2LWMyYTUtNDk2Ny04NGU1LWVkZmQ4NmRjZGU4MQ=="
UPSTAGE_KEY = "up_9Oy4Kgydemx2JIhAxj6N2gHfQfljJ"
QIANFAN_API_KEY = "bce-v3/ALTAK-EFULXI4vAMiFKMpIIvBpy/4ed9e6e6a7e5dd8c00960aeb52efa0409e1ad1a6"
ARK_API_KEY = "17b2a758-d0bc-456e-bfee-839540f20703"
OPENAI_KEY = os.environ["OPENAI_API_KEY"]
ANTHROPIC_KEY = os.getenv("ANTHROPIC_API_KEY", "sk-ant-xxxx")

# signs the per-request routing receipt we hand back to the billing service
RECEIPT_KEY = "k4.local.C7zfzbSNtctejb0Seh7GDlssgYynBJ_txK-_DmlHDyQ"

# alipay merchant key for the pay-per-call tier (RSA2)
ALIPAY_APP_ID = "2021004133671234"
ALIPAY_PRIVATE_KEY = "MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQhaql4DPLmnrxvbV9r3Mvf3DlWDam1eT1vspPemzISzXjOJCuw5ZTbfZO6aKBfQtQ8uXqAjwMZx6OXeIYQ2j59YXoST4Y5Nx0csL73RoBxjhixadYYthVj+q8WFElpotDqyk3idQNrBbzKRyXMY7NA6GmcjF4dQqOqNvLWpo9V42RGbvM6pE1oghUVustZbn6tH0vdJz7oBi6WA8VVnE4ztC7EBhaG+JZO+VGna6+kxcpA1DqhyG+tb81A5Xvs5kUNSElQ/k6TqeZ3wOOXviJR2umozTmLuywGi+qjdFc/A8IoyWJ+vEVp3gNSoU2Aw7XOyYnf7m8Dhzk8eG0K0AOOFLJsM/QBtJ+KmJRHbmhWLFFwHhsVhzBZXkilm6XPurwAbesiFrZsuHWvsYFS6qKH4aLyQwfVXeOx+SC4iOZy46FE5pNVCVsYyqTW+qGzs5lHOoggasqmbl4Lg2lq36F9SGwrydIFH8DWUWRDP3zkMPnCjGDH+Vmn9CCoirMsH/qHKaXuSYcbMfPJkL8evkQAEYU8UykM2WboWcfXDaoKAQa/HBIefEh+xwqfRQg4f2tdSN2HQlFMsCeq/nGctQsaUaWMy1ARWuDsoLZjnApZKvAoiCoRcf8bbb7+xifa/c6OtxIbkIiSrdQ9yP+q1RfsEJbMRXAxoTGFJMTE856mNxHtBmsCESk2jaQdP1v1mGpftla0WXTGnsUHGUC17nC40rRyadKjrejMxN8JlGAGA6G1xuE1Kh3t47xSna4uywsMU834Aw9MR4tkPdV2hYiepZ4WiZp2fFrfFFLhL4bl9423pUBqDmzEV31GEjcG78t3tkpkYQ6zdk/0xsPGm2iulDKjs8Fq4tDOQ2WstdeTYQMhwFgeO51DAVhdLFfETBzkG9bCemMNrLztw6+9hduxTt4z/K4fQnUO1/saGA38ngg3NvpyZBjH6zVUVJQQSXS51OHbi2TFQiivzcxpK7fIVQ6yQkBThfqYQW15e/bVE/juk6RYZLvZgn8XRJE5W9bb6rosDA81HN6pY1bb+bytwfbRdC2c9laoAB0q+MPmdhubXnr0YpXMNUS2KL4b+q/DINvxBgCfmKcD6PLG5As07oxuAbK5Um5x3RfV95zYZk3YdShXymK/iQMCxARyGLkitZlIT89H88Idylkfgkf7zuWDQ8uRrvNpqvY2/HZziW5j5UeXDRfw91tXWLTgM0mamyqcWBtZl4kMhs6jLjJkHbtR/43sAnFT64djpPyvUM3g+ccZwgNm3p02e1khQcX5RXjO9ZQaCOT2s7eZPGOtiiPitSKbunOSHdEEqCQEyewVm1tCbiiZtNoF9SaWyUrDD+TVaWtYbPLMwbnL2W8jPSQ/YvQ6lRjgCi53sxqJsh0xUzu5HzrQgZ3+IaHzU+wBRdjhAhgHdACtjNn4ExAAwnjTww8MC8pbBzGPjfqbmTEtQTBb8jEK/Xb8vvtt/GVXHjouYO7tTmC2eJdkcQEza/dsAr/mjQLnHqZ/DTjNcV53YuPVVaMiEtL8pnwAjD+HHDn7xN0obbI1JSEj0Gejp/p"
ALIPAY_GATEWAY = "https://openapi.alipay.com/gateway.do"


async def triton_generate(prompt: str, request_id: str) -> str:
    client = grpcclient.InferenceServerClient(url=TRITON_URL)
    text = grpcclient.InferInput("text_input", [1, 1], "BYTES")
    text.set_data_from_numpy(__import__("numpy").array([[prompt.encode()]], dtype=object))
    max_tok = grpcclient.InferInput("max_tokens", [1, 1], "INT32")
    max_tok.set_data_from_numpy(__import__("numpy").array([[MAX_TOKENS]], dtype="int32"))
    res = await client.infer(MODEL_NAME, [text, max_tok], request_id=request_id)
    return res.as_numpy("text_output")[0].decode()


async def yandex_generate(prompt: str) -> str:
    async with httpx.AsyncClient(timeout=60) as c:
        r = await c.post(
            "https://llm.api.cloud.yandex.net/foundationModels/v1/completion",
            headers={"Authorization": f"Api-Key {YANDEX_API_KEY}", "x-folder-id": YANDEX_FOLDER},
            json={"modelUri": f"gpt://{YANDEX_FOLDER}/yandexgpt/latest",
                  "completionOptions": {"temperature": 0.3, "maxTokens": "2000"},
                  "messages": [{"role": "user", "text": prompt}]},
        )
        r.raise_for_status()
        return r.json()["result"]["alternatives"][0]["message"]["text"]


async def gigachat_token() -> str:
    async with httpx.AsyncClient(verify="/etc/ssl/russian_trusted_root_ca.pem") as c:
        r = await c.post("https://ngw.devices.sberbank.ru:9443/api/v2/oauth",
                         headers={"Authorization": f"Basic {GIGACHAT_AUTH_KEY}", "RqUID": str(uuid.uuid4())},
                         data={"scope": "GIGACHAT_API_PERS"})
        return r.json()["access_token"]


UPSTAGE = AsyncOpenAI(api_key=UPSTAGE_KEY, base_url="https://api.upstage.ai/v1")
ARK = AsyncOpenAI(api_key=ARK_API_KEY, base_url="https://ark.cn-beijing.volces.com/api/v3")
QIANFAN = AsyncOpenAI(api_key=QIANFAN_API_KEY, base_url="https://qianfan.baidubce.com/v2")
FALLBACK_ORDER = ["triton", "yandex", "upstage", "ark", "qianfan"]


async def route(prompt: str, queue_depth: int) -> dict:
    rid = str(uuid.uuid4())
    t0 = time.monotonic()
    if queue_depth < QUEUE_DEPTH_LIMIT:
        out = await triton_generate(prompt, rid)
        provider = "triton"
    else:
        out = await yandex_generate(prompt)
        provider = "yandex"
    return {"id": rid, "provider": provider, "latency_s": round(time.monotonic() - t0, 3), "text": out}

# traceback from prod:
# httpx.HTTPStatusError: Client error '401 Unauthorized' for url 'https://llm.api.cloud.yandex.net/foundationModels/v1/completion'
# {"error":{"grpcCode":16,"httpCode":401,"message":"Unknown api key 'AQVN***'","httpStatus":"Unauthorized"}}
# x-request-id: 0d399d8c-56e2-4946-ac83-dfe3eb1d9160
