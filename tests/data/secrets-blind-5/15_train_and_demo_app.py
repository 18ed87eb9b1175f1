# train_and_demo.py -- customer script, "gradio login stops working after I rent a second GPU"
# requirements: gradio==5.6.0 peft==0.13.2 transformers==4.46.3 agentops
import json, os, torch, gradio as gr, agentops
from openai import OpenAI
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig
from jose import jwt
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

BASE = "Qwen/Qwen2.5-Coder-7B-Instruct"
print("device:", torch.cuda.get_device_name(0))
tok = AutoTokenizer.from_pretrained(BASE, token=os.environ["HF_TOKEN"])
model = AutoModelForCausalLM.from_pretrained(
    BASE,
    quantization_config=BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16),
    device_map="auto",
)
model = get_peft_model(model, LoraConfig(r=16, lora_alpha=32, target_modules=["q_proj", "v_proj"]))

agentops.init(api_key="81c6a0b8-109e-42df-a4ed-84fc6e487395", default_tags=["qwen-coder-demo"])
judge = OpenAI(base_url="https://api.featherless.ai/v1", api_key="rc_603bee1093d545d39bfbef7b9d82e4cc457d140e82f0725f49117ab1e3d91aff")

# symmetric key used to verify tokens minted by our billing portal
JWKS = {"keys": [{"kty": "oct", "kid": "demo-5fedb11e", "alg": "HS256", "k": "1GMQV-Z1n58yS5P54Rd3DK2Y51vTTcCrzhuS5rbrv5E"}]}

# request logs are encrypted at rest; Tink keyset kept inline "temporarily"
TINK_KEYSET = json.loads("""{
  "primaryKeyId": 2032515216,
  "key": [{
    "keyData": {
      "typeUrl": "type.googleapis.com/google.crypto.tink.AesGcmKey",
      "value": "GiCksy1Zvmtpj9K1H3tZbw6cZpuuNRYpXMqytm5mYOXK5g==",
      "keyMaterialType": "SYMMETRIC"
    },
    "status": "ENABLED", "keyId": 2032515216, "outputPrefixType": "TINK"
  }]
}""")
ENCRYPTED_LOG_KEY = os.getenv("LOG_KEY", "")
LEGACY_AES_KEY = bytes.fromhex("02211ff2e7b70e4a80b9a8f2a89b256dd0b40b4b246804c87413b282be625f2b")  # old logs before Tink


def verify(token: str) -> dict:
    return jwt.decode(token, JWKS["keys"][0], algorithms=["HS256"])


def encrypt_log(line: str) -> bytes:
    nonce = os.urandom(12)
    return nonce + AESGCM(LEGACY_AES_KEY).encrypt(nonce, line.encode(), None)


def chat(msg, history):
    ids = tok.apply_chat_template([{"role": "user", "content": msg}], return_tensors="pt").to(model.device)
    out = model.generate(ids, max_new_tokens=256)
    answer = tok.decode(out[0][ids.shape[1]:], skip_special_tokens=True)
    encrypt_log(answer)
    return answer


demo = gr.ChatInterface(chat, title="Qwen coder LoRA demo")
demo.launch(server_name="0.0.0.0", server_port=7860, auth=("demo", "4419-TundraTundra"), share=False)
