// Command gateway refunds a single order through the Stripe gateway.
package main

import (
	"log"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"example.com/shop/core/money"
	"example.com/shop/gateway/refund"
)

// gitRevision returns the short commit hash the binary was built from.
func gitRevision() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

func main() {
	if os.Getenv("LOG_LEVEL") == "debug" {
		log.SetFlags(log.LstdFlags | log.Lshortfile)
	}
	key := os.Getenv("STRIPE_SECRET_KEY")
	if key == "" {
		log.Fatal("STRIPE_SECRET_KEY is not set")
	}
	if len(os.Args) != 3 {
		log.Fatal("expected arguments: ORDER_ID AMOUNT_CENTS")
	}
	amount, err := strconv.ParseInt(os.Args[2], 10, 64)
	if err != nil {
		log.Fatalf("invalid amount %q: %v", os.Args[2], err)
	}

	log.Printf("refund gateway %s", gitRevision())
	svc := refund.NewService(refund.NewStripeGateway(key))
	svc.Record(os.Args[1], amount)
	if err := svc.IssueRefund(os.Args[1]); err != nil {
		log.Fatal(err)
	}
	log.Printf("refunded order %s (%s)", os.Args[1], money.Format(amount))
}
