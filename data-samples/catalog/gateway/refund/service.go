// Package refund processes refunds against an external payment provider.
package refund

import (
	"errors"
	"fmt"
)

// ErrInvalidID is returned when a refund is requested without an order id.
var ErrInvalidID = errors.New("refund: empty order id")

// PaymentGateway is the outbound provider that moves money back to a customer.
type PaymentGateway interface {
	Refund(chargeID string, amountCents int64) error
}

// Service coordinates refunds for orders.
type Service struct {
	gateway PaymentGateway
	ledger  map[string]int64
}

// NewService builds a Service that refunds through the given gateway.
func NewService(gw PaymentGateway) *Service {
	return &Service{gateway: gw, ledger: map[string]int64{}}
}

// Record stores the amount charged for an order so it can be refunded later.
func (s *Service) Record(id string, amountCents int64) {
	s.ledger[id] = amountCents
}

// IssueRefund refunds the amount recorded for an order id through the gateway.
func (s *Service) IssueRefund(id string) error {
	if id == "" {
		return ErrInvalidID
	}
	amount := s.amountFor(id)
	if err := s.gateway.Refund("ch_"+id, amount); err != nil {
		return fmt.Errorf("refund %s: %w", id, err)
	}
	delete(s.ledger, id)
	return nil
}

func (s *Service) amountFor(id string) int64 {
	return s.ledger[id]
}
