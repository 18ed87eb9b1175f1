"""payments/gateways.py -- region-specific checkout for GPU hour packs.

Customer note: Omise charges in THB fail with "authentication_failure" since Monday.
"""
import hashlib
import os

import requests

OMISE_PUBLIC_KEY = "pkey_5bpfxy4vf7foklxj8zl"          # used by the browser widget
OMISE_SECRET_KEY = os.getenv("OMISE_SECRET_KEY", "skey_5gy4ommn300bpsc52rt")

RAZORPAY_KEY_ID = "rzp_live_Q9Z7tvqX2BPgZ0"             # public, goes to checkout.js
RAZORPAY_KEY_SECRET = os.environ.get("RAZORPAY_KEY_SECRET", "REDACTED")

CASHFREE_APP_ID = "63006192bb9a3d618dda08b615ad6067"
CASHFREE_SECRET = "cfsk_ma_prod_def6b5b164163f64b908b45d35668f1f_06dd99e0"

ROBOKASSA_LOGIN = "gpu-hours"
ROBOKASSA_PASSWORD1 = "AEBpFMATkWos790970pd"

BTCPAY_URL = "https://pay.gpu-rental.example.io"
BTCPAY_API_KEY = "ba2d8019c408a1afee5836e098ee5825ba6287a2"

HCAPTCHA_SITEKEY = "f0ca8c32-027b-42a5-8c85-f600e0844da5"


def omise_charge(amount_satang: int, token: str) -> dict:
    r = requests.post(
        "https://api.omise.co/charges",
        auth=(OMISE_SECRET_KEY, ""),
        data={"amount": amount_satang, "currency": "thb", "card": token},
        timeout=15,
    )
    r.raise_for_status()
    return r.json()


def cashfree_order(order_id: str, amount: float, phone: str) -> dict:
    headers = {
        "x-client-id": CASHFREE_APP_ID,
        "x-client-secret": CASHFREE_SECRET,
        "x-api-version": "2025-01-01",
    }
    body = {"order_id": order_id, "order_amount": amount, "order_currency": "INR",
            "customer_details": {"customer_id": phone, "customer_phone": phone}}
    return requests.post("https://api.cashfree.com/pg/orders", json=body,
                         headers=headers, timeout=15).json()


def robokassa_signature(out_sum: str, inv_id: int) -> str:
    raw = f"{ROBOKASSA_LOGIN}:{out_sum}:{inv_id}:{ROBOKASSA_PASSWORD1}"
    return hashlib.md5(raw.encode()).hexdigest()


def btcpay_invoice(store_id: str, amount: str) -> dict:
    return requests.post(
        f"{BTCPAY_URL}/api/v1/stores/{store_id}/invoices",
        headers={"Authorization": f"token {BTCPAY_API_KEY}"},
        json={"amount": amount, "currency": "USD"},
        timeout=15,
    ).json()


# >>> omise_charge(129900, "tokn_test_j1095rld5jlhnn0e6fz")
# requests.exceptions.HTTPError: 401 Client Error: Unauthorized for url: https://api.omise.co/charges
# {"object":"error","location":"https://www.omise.co/api-errors#authentication-failure","code":"authentication_failure","message":"authentication failed"}
