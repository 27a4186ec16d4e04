package refund

import (
	"fmt"
	"io"
	"net/http"
)

// paymentsAPI is the in-cluster address of the payments API (k8s Service `payments-api`).
const paymentsAPI = "http://payments-api"

// Receipt fetches an order's plain-text receipt from the payments API.
func Receipt(orderID string) (string, error) {
	resp, err := http.Get(paymentsAPI + "/orders/" + orderID + "/receipt")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	return string(body), nil
}

// Healthy asks a service's liveness endpoint; base is any service's address.
func Healthy(base string) error {
	resp, err := http.Get(base + "/healthz")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("unhealthy: %s", resp.Status)
	}
	return nil
}
