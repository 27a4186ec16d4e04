import { RefundClient, requestRefund } from "./refunds";

type FetchCall = { url: string; init: RequestInit };

function stubFetch(calls: FetchCall[], payload: unknown, ok = true): void {
  (globalThis as any).fetch = async (url: string, init: RequestInit) => {
    calls.push({ url, init });
    return { ok, status: ok ? 200 : 400, json: async () => payload };
  };
}

describe("requestRefund", () => {
  it("posts the amount to the refunds endpoint", async () => {
    const calls: FetchCall[] = [];
    stubFetch(calls, { ok: true, refundId: "re_1" });
    const result = await requestRefund("o-1", 500);
    expect(result.refundId).toBe("re_1");
    expect(calls[0].url).toBe("/api/refunds/o-1");
    expect(JSON.parse(String(calls[0].init.body))).toEqual({ orderId: "o-1", amount: 500 });
  });

  it("throws when the server rejects the refund", async () => {
    stubFetch([], { ok: false }, false);
    await expect(requestRefund("o-1", 0)).rejects.toThrow("refund request failed");
  });
});

describe("RefundClient", () => {
  it("submits through the base client", async () => {
    const calls: FetchCall[] = [];
    stubFetch(calls, { ok: true, refundId: "re_2" });
    const client = new RefundClient("http://shop.test");
    const result = await client.submit({ orderId: "o-2", amount: 100 });
    expect(result.refundId).toBe("re_2");
    expect(calls[0].url).toBe("http://shop.test/api/refunds/o-2");
  });
});
