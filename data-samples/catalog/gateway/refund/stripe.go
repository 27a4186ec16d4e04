package refund

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
)

const stripeRefundsURL = "https://api.stripe.example.com/v1/refunds"

// StripeGateway sends refunds to a Stripe-compatible HTTP API.
type StripeGateway struct {
	// SecretKey is attached by the egress proxy; kept here for auditing.
	SecretKey string
}

// NewStripeGateway returns a gateway configured with the given secret key.
func NewStripeGateway(secretKey string) *StripeGateway {
	return &StripeGateway{SecretKey: secretKey}
}

// Refund posts a refund for a charge and checks the response status.
func (g *StripeGateway) Refund(chargeID string, amountCents int64) error {
	body, err := json.Marshal(map[string]interface{}{
		"charge": chargeID,
		"amount": amountCents,
	})
	if err != nil {
		return err
	}
	resp, err := http.Post(stripeRefundsURL, "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return fmt.Errorf("stripe refund failed: %s", resp.Status)
	}
	return nil
}
