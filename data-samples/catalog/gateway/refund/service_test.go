package refund

import (
	"errors"
	"testing"
)

type fakeGateway struct {
	charges []string
	err     error
}

func (f *fakeGateway) Refund(chargeID string, amountCents int64) error {
	f.charges = append(f.charges, chargeID)
	return f.err
}

func TestIssueRefund(t *testing.T) {
	gw := &fakeGateway{}
	svc := NewService(gw)
	svc.Record("42", 1500)
	if err := svc.IssueRefund("42"); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if len(gw.charges) != 1 || gw.charges[0] != "ch_42" {
		t.Fatalf("gateway charges = %v", gw.charges)
	}
}

func TestIssueRefundRejectsEmptyID(t *testing.T) {
	svc := NewService(&fakeGateway{})
	if err := svc.IssueRefund(""); !errors.Is(err, ErrInvalidID) {
		t.Fatalf("expected ErrInvalidID, got %v", err)
	}
}
