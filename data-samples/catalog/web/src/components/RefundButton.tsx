import React, { useState } from "react";

import { truncate } from "@shop/core/util/strings";

import { requestRefund } from "../api/refunds";

export interface RefundButtonProps {
  orderId: string;
  amount: number;
  onDone?: (refundId: string) => void;
}

function formatCents(cents: number): string {
  return `$${(cents / 100).toFixed(2)}`;
}

export function RefundButton({ orderId, amount, onDone }: RefundButtonProps) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function handleClick() {
    setBusy(true);
    setError(null);
    try {
      const result = await requestRefund(orderId, amount);
      if (result.ok && result.refundId) {
        onDone?.(result.refundId);
      } else {
        setError(result.error ?? "Refund failed");
      }
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="refund-button">
      <button disabled={busy} onClick={handleClick}>
        {busy ? "Refunding..." : `Refund ${formatCents(amount)}`}
      </button>
      {error && <p className="error">{truncate(error, 80)}</p>}
    </div>
  );
}

export default RefundButton;
