// apps/console/src/server/integrations.ts  +  apps/console/.env.local
// After upgrading to next@15.2 the /api/billing route returns 500 "Paddle: authentication_failed".
// Pasting the integration module and the env file the dev container loads.

import { createClerkClient } from "@clerk/backend";
import { Paddle, Environment } from "@paddle/paddle-node-sdk";
import * as stytch from "stytch";
import postgres from "postgres";

export const MAX_TOKENS_PER_REQUEST = 8192;
export const DEFAULT_MODEL = "Qwen/Qwen2.5-72B-Instruct-AWQ";

export const clerk = createClerkClient({
  secretKey: process.env.CLERK_SECRET_KEY ?? "sk_live_VmavwOdyfBolzsrvs2elVV0FsYjLglWcXmPiojZf",
  publishableKey: "pk_live_Y2xlcmsuY29uc29sZS5ncHUtY2xvdWQuZXhhbXBsZSQ",
});

export const stytchClient = new stytch.Client({
  project_id: "project-live-4c1e9b2a-7d3f-4e8a-9b6c-2f1d0e7a5c34",
  secret: "secret-live-/mikmmVQSZ834+ilMkWr0/m51V8dmRsXjKLI",
});

export const paddle = new Paddle(process.env.PADDLE_API_KEY ?? "pdl_live_apikey_m8qdkadnj52g6wjntz84v73vh5_B09rYuJk9VSpFYczVYRjid_cNe", {
  environment: Environment.production,
});

// analytics DB (read replica). TODO move to env
export const sql = postgres({
  host: "analytics-ro.internal.example",
  port: 5432,
  database: "usage",
  username: "console_ro",
  password: "Kestrel%3768fern_NU",
  max: 10,
});

export const supabaseAdmin = {
  url: "https://xkqzvbnmlpoiuytrewq1.supabase.co",
  anonKey: "sb_publishable_Qm9vT3cXl7aKz2Rn8pVw1Q_4tYhLs0Ne",
  serviceRoleKey: process.env.SUPABASE_SERVICE_ROLE_KEY!,
};

export const firebaseWebConfig = {
  apiKey: "AIzaSyC3f8kLq2Zp7WnR4tVx9BbYm1JdHs6GeUo",
  authDomain: "gpu-console-prod.firebaseapp.com",
  projectId: "gpu-console-prod",
  appId: "1:493021857710:web:8c2f4e6a1b9d3c7e5f0a21",
};

export const mapboxPublicToken = "pk.eyJ1IjoiZ3B1LWNvbnNvbGUiLCJhIjoiY2x6OXF3ZXJ0MDFiajJrcHZ5eG5tM2Y0ZCJ9.Xq3vK8pL2nR7tW1yZ5bC4g";

// integration test fixture (captured from a real browser session, oops)
export const TEST_SESSION_COOKIE =
  "__Secure-authjs.session-token=eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2Q0JDLUhTNTEyIiwia2lkIjoiWlE5RWNoSEN4aFhXRlhhZDAxUXBmWUk2QjlKelUyVHk1ckNrWTNILVhFYW8tRXRUeXVZQVNYS0d1Yll6RXNpSXRhZE9IUHZUcU9zZ1UtU2FzbVNKY0EifQ..ghOs63B1yKUM1-aQkAk1wA.s7rkTKDKg5vtoQLlGPaL25xC6Ox1wa9wOGGhf19BoRddCYcO1FToVMOSADrjfYUSQmYeIy94KK6tDya89FT_BgINb4aq09Vx3LyAcNGeDJp1odguRrP2VghrA2P1FkO81xbwRPeKuM0-tG9NqNqNOFhbjigU6SCzekCC_U0sJMHbi6g_4hFvvNywGeGXnSFERFz7Pa7T_-KeJNEwrN3oXoWkNVdqEIon57-u-eh7ZMxZG2Qg_XMnr3e1mLGQShnMxCUXg259x3Hlb_gBhMDhZJY2h13Da8Hi6kTFnyS92tulKZ6a8gcdzUXgmq9htJNdYn9ZF8xUNyXBeLOtg9jDYJcMs6OP82Mj4au2EwQwNTF6MHpRVG9aGCFMaVp1CM6YYKf6bvAxALBMSfJOwNGKyogyDf4LE3SGAaZQ28bjHZyYjK7lhvRb644N4k_xINieOg7ZQwhaO7HR59xY90ILxA.U3Riap-qkOAq9HykqOPVGvkcwGLo4I2ycz7EiILaIYM";

/* ---------------- .env.local ---------------- */
/*
NEXT_PUBLIC_APP_URL=https://console.gpu-cloud.example
CLERK_SECRET_KEY=
NEXT_PUBLIC_CLERK_PUBLISHABLE_KEY=pk_live_Y2xlcmsuY29uc29sZS5ncHUtY2xvdWQuZXhhbXBsZSQ
PADDLE_API_KEY=${PADDLE_API_KEY}
NEXT_PUBLIC_PADDLE_CLIENT_TOKEN=live_7d2c9e1f4a8b3c6d5e0f1a2b3c4
SUPABASE_ACCESS_TOKEN=sbp_0032636bfd377a7d194ebfb55048dac856ff7ed2
ASANA_PAT=2/4502898068837060/5016300715518398:4767644fe98f205c7b3b22ccb1acc9b4
CLICKUP_API_TOKEN=pk_32848592_43HD2PVX5X16EUA0D9E37BKULQ1ZJN7S
TYPEFORM_TOKEN=tfp_H7JRcuS7ZHoWv6ne1FJBC9TZyXGCiQ4hHz2gTFYcoD6N_yb7nKqLTB2Ecye
OPENAI_API_KEY=sk-xxxx
STRIPE_SECRET_KEY=YOUR_API_KEY
NEXT_TELEMETRY_DISABLED=1
*/

/* server log:
 ⨯ Error: Paddle API error: authentication_failed - Authentication token is invalid or expired
    at PaddleClient.request (node_modules/@paddle/paddle-node-sdk/dist/cjs/internal/api/client.js:97:19)
  digest: '2481930577'
 POST /api/billing 500 in 412ms
*/
