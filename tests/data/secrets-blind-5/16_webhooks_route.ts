// app/api/webhooks/[provider]/route.ts  -- Next.js 15, deployed on the customer's GPU portal
import crypto from "node:crypto";
import { Webhook } from "svix";
import { createClient } from "@libsql/client";

// TODO(kai): move all of these back to env before go-live
const SVIX_SECRET = process.env.SVIX_WEBHOOK_SECRET ?? "whsec_2QO34QSHrCAf417Olw2zpGgfJQF9WpQV";
const LINEAR_SIGNING_SECRET = "lin_wh_SjIRVp6YNn8F8K0Gq9dnxwMNsjJLhY9Z5bvzAAJA3Tll";
const ZOOM_SECRET_TOKEN = "1pN7kwNp-bXjXs-SpR67Xm";
const LEMON_SQUEEZY_API_KEY = "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.eyJhdWQiOiJiYTllNzc2OS0yYjg0LTQyOWMtODdkMS04ZDZiZWM3YzcyZTIiLCJqdGkiOiI5NzU4N2EwYWY5OGMxMjAxYjEwMjVlMTRmZWI0OWM0ODI1YTdhODMxNGQwMTRmMjlhYWYwMjI3ZGNhZmY0ZTg4YTIxOWMyNjA4MDllMDFmYSIsImlhdCI6MTczMTkxMTE4MiwibmJmIjoxNzMxOTExMTgyLCJleHAiOjE3NjM3MDYzODIsInN1YiI6IjQ1MjcwMiIsInNjb3BlcyI6W119.H-ZMfgU5l7MxQ-Y_AdzxhHQy14CrYu_coDJic48MsiXI8SkFwBFsUuTjb3R3UYPg3yFX3w1W3uXYAqxd0cBnezjNM8qvXwPGOUgtqaMiJlctfs93nC7or4cE6_UyXPNVtf9j65puGSa5GXd5Xk5xbiTcQAz21ZlpBtMZA_ijQOIQQ35k4B4SnEh4zGSNCYutTqLLwC0d8xJKdJ9RkU-soRa8zBrR-RvNUoyx4VinbXnX9w-DDRK703iFE9-QTfgqeRGQ8waFKhmQmnfRjXU6qamsHk1Fl6dCEMBtjczV5BXt5NiLv6sZAjPCUCb1JnqiJxqVXx3dFgCLEQ3K1oZbFA";
const SHOPIFY_TOKEN = "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";

const db = createClient({
  url: "libsql://usage-gpulab.turso.io",
  authToken: "eyJhbGciOiJFZERTQSIsInR5cCI6IkpXVCJ9.eyJhIjoicnciLCJpYXQiOjE3MzIxNjMxODIsImlkIjoiMWM1MDE5MWUtNDgxZS00OWJiLTlhNjItYzljODFjZTUzM2ExIn0.ofgPWvdt7YGCaD8UU9cqz-c-VDrBeLR4nrX09jeWfTJApVLHpRakCbHK81DZg6V09V_7BkNv8O62zRTiscDYEg",
});

export async function POST(req: Request, { params }: { params: Promise<{ provider: string }> }) {
  const { provider } = await params;
  const body = await req.text();
  switch (provider) {
    case "clerk": {
      const wh = new Webhook(SVIX_SECRET);
      const evt = wh.verify(body, Object.fromEntries(req.headers)) as { type: string };
      await db.execute({ sql: "insert into events(kind) values (?)", args: [evt.type] });
      return Response.json({ ok: true });
    }
    case "linear": {
      const sig = crypto.createHmac("sha256", LINEAR_SIGNING_SECRET).update(body).digest("hex");
      if (sig !== req.headers.get("linear-signature")) return new Response("bad sig", { status: 401 });
      return Response.json({ ok: true });
    }
    case "zoom": {
      const json = JSON.parse(body);
      if (json.event === "endpoint.url_validation") {
        const hash = crypto.createHmac("sha256", ZOOM_SECRET_TOKEN).update(json.payload.plainToken).digest("hex");
        return Response.json({ plainToken: json.payload.plainToken, encryptedToken: hash });
      }
      const msg = `v0:${req.headers.get("x-zm-request-timestamp")}:${body}`;
      const expected = "v0=" + crypto.createHmac("sha256", ZOOM_SECRET_TOKEN).update(msg).digest("hex");
      if (expected !== req.headers.get("x-zoom-signature")) return new Response("bad sig", { status: 401 });
      return Response.json({ ok: true });
    }
    case "lemonsqueezy": {
      const r = await fetch("https://api.lemonsqueezy.com/v1/subscriptions", {
        headers: { Authorization: `Bearer ${LEMON_SQUEEZY_API_KEY}`, Accept: "application/vnd.api+json" },
      });
      return Response.json(await r.json());
    }
    case "merch": {
      const r = await fetch("https://gpulab-merch.myshopify.com/admin/api/2024-10/orders.json", {
        headers: { "X-Shopify-Access-Token": SHOPIFY_TOKEN },
      });
      return Response.json(await r.json());
    }
  }
  return new Response("unknown provider", { status: 404 });
}
