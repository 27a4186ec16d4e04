// Refund API used by the storefront: a plain function and a client class.

import { BaseClient, HttpError } from "./client";

export interface RefundRequest {
  orderId: string;
  amount: number;
  reason?: string;
}

export interface RefundResult {
  ok: boolean;
  refundId?: string;
  error?: string;
}

export interface RefundApi {
  submit(request: RefundRequest): Promise<RefundResult>;
}

export async function requestRefund(orderId: string, amount: number): Promise<RefundResult> {
  const body: RefundRequest = { orderId, amount };
  const response = await fetch(`/api/refunds/${encodeURIComponent(orderId)}`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!response.ok) {
    throw new HttpError(response.status, "refund request failed");
  }
  return (await response.json()) as RefundResult;
}

export class RefundClient extends BaseClient implements RefundApi {
  async submit(request: RefundRequest): Promise<RefundResult> {
    return this.postJson<RefundResult>(`/api/refunds/${encodeURIComponent(request.orderId)}`, request);
  }
}
