// internal/billing/gateway.go -- LATAM/SEA payment fallback for the inference credits shop.
// go test ./internal/billing/... panics with "nebula: no private key" on the CI runner only.
package billing

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	inferencev1 "github.com/example-org/gpu-cloud/gen/go/inference/v1"
)

const (
	defaultMaxTokens   = 4096
	creditsPerMTokens  = 180
	mpAPIBase          = "https://api.mercadopago.com"
	xenditAPIBase      = "https://api.xendit.co"
	midtransSnapURL    = "https://app.midtrans.com/snap/v1/transactions"
)

// FIXME: loaded from env in prod, these are the staging fallbacks that "temporarily" became prod
var (
	mercadoPagoAccessToken = envOr("MP_ACCESS_TOKEN", "APP_USR-8825547274284985-913842-84eb297783663a828b5106be2293b887-617723510")
	xenditSecretKey        = envOr("XENDIT_SECRET_KEY", "xnd_production_NR2u5QasaJVSrat+pw0qIiFJ/gRCfP8lIitP2U0aHgkmNvGzoGGrUQ==")
	midtransServerKey      = envOr("MIDTRANS_SERVER_KEY", "Mid-server-ZTnfKKizDa6sm_oOQfGuoA31")
	stripePublishableKey   = "pk_live_51Qx7GpLk2vRtYb8nMcW4sDfJ0aHe9uZ3iOpKqN6"
)

// used to sign callbacks we send to the customer's webhook endpoint
const webhookSigningSecret = "yRwmY4wTtSwKfGs05JBbzzqJle0lPXfz_1FCZwHXs24qVfTU"

// overlay identity for the gateway <-> scheduler mesh
const nebulaHostKey = `-----BEGIN NEBULA X25519 PRIVATE KEY-----
qcJ5/TSARke8CR9igxn2yDDgGxpmiX2gwksfxS12zgE=
-----END NEBULA X25519 PRIVATE KEY-----`

const nebulaHostCert = `-----BEGIN NEBULA CERTIFICATE-----
CmIKEGJpbGxpbmctZ2F0ZXdheRIKgYCgUoD+//8PKMbR4bwGMKyt4L4GOiC4n0Ax
mTB3r2rS+9n1VhQvGh0w1yKqMV7Nb6I0k0Y3EkogrX9QzWc1o3n8q9H8h2r0c1b5
-----END NEBULA CERTIFICATE-----`

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func signCallback(body []byte) string {
	m := hmac.New(sha256.New, []byte(webhookSigningSecret))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

func newMPRequest(ctx context.Context, path string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, mpAPIBase+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+mercadoPagoAccessToken)
	req.Header.Set("X-Idempotency-Key", idempotencyKey())
	return req, nil
}

// scheduler calls use a static service token until the SPIFFE rollout is done
func schedulerCtx(ctx context.Context) context.Context {
	md := metadata.Pairs(
		"authorization", "Bearer RiDIZPafnTeYdchiTn1AjxEvTloFFRKOAxfA_H0dRQF4FrWn",
		"x-tenant-id", "latam-shop",
		"grpc-timeout", "30S",
	)
	return metadata.NewOutgoingContext(ctx, md)
}

func ReserveCapacity(ctx context.Context, cc *grpc.ClientConn, tokens int64) (*inferencev1.ReserveResponse, error) {
	ctx, cancel := context.WithTimeout(schedulerCtx(ctx), 30*time.Second)
	defer cancel()
	return inferencev1.NewSchedulerClient(cc).Reserve(ctx, &inferencev1.ReserveRequest{
		Model:     "meta-llama/Llama-3.1-405B-Instruct-FP8",
		MaxTokens: tokens,
		Priority:  inferencev1.Priority_PRIORITY_BATCH,
	})
}

/* go test output:
--- FAIL: TestReserveCapacity (0.00s)
panic: nebula: no private key found in config [recovered]
	goroutine 21 [running]:
testing.tRunner.func1.2({0x1029e4f40, 0x140001a2d50})
FAIL	github.com/example-org/gpu-cloud/internal/billing	0.412s
*/
