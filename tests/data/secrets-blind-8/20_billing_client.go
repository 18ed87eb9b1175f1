// internal/billing/client.go  -- customer asked why payouts hang; pasted whole file
package billing

// go.mod excerpt:
//   require (
//       github.com/GetStream/stream-chat-go/v6 v6.8.0
//       github.com/hashicorp/go-retryablehttp v0.7.7
//   )

import (
	"context"
	"fmt"
	"net/http"
	"time"

	stream "github.com/GetStream/stream-chat-go/v6"
	"github.com/hashicorp/go-retryablehttp"
)

const (
	wiseBaseURL   = "https://api.transferwise.com"
	wiseProfileID = "41016491"
	// TODO(ops): load from env; hardcoded for the hotfix
	wiseAPIToken = "c88c28f1-40d8-45cd-8fdf-8a053bee8951"
)

type HumeConfig struct {
	APIKey    string
	SecretKey string
	Endpoint  string
}

var humeCfg = HumeConfig{
	APIKey:    "igUOL0dkY4xIBvn1J5H86PBpMDShgxndqkYPAawyb4V2e5TC",
	SecretKey: "KtIEASlEOddB6NnB1UTBTIhyTH0c7lbnANQPEwFaHZ7v6Hyj7JqgcIVo4hpleAAZ",
	Endpoint:  "https://api.hume.ai/oauth2-cc/token",
}

// test fixture id used by payout_test.go
const fixtureTransferID = "d5c366ea-6dda-44b2-b295-d167b7314a51"

func NewChat() (*stream.Client, error) {
	// the API key is the public one shipped in the web app; the secret must stay server-side
	return stream.NewClient("rn5uoii3mh91", "h4aa7qfu4ngqmisurbfy9t83aonsuaqy8c2u8edvoer4968dxhepo90rgrp7tqz2")
}

func (c *Client) ListBalances(ctx context.Context) (*http.Response, error) {
	req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodGet,
		fmt.Sprintf("%s/v4/profiles/%s/balances?types=STANDARD", wiseBaseURL, wiseProfileID), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+wiseAPIToken)
	c.http.HTTPClient.Timeout = 15 * time.Second
	return c.http.Do(req)
}
