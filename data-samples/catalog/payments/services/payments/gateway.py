"""HTTP gateway that talks to the external payments provider."""

import os

import requests

from services.payments.base import BaseGateway, GatewayError

REFUNDS_URL = "https://api.payments.example.com/v1/refunds"


class PaymentGateway(BaseGateway):
    """Outbound client for the payments provider's REST API."""

    name = "payments-api"

    def __init__(self):
        api_key = os.environ["PAYMENTS_API_KEY"]
        timeout = int(os.getenv("PAYMENTS_TIMEOUT", "30"))
        super().__init__(api_key, timeout=timeout)

    def Refund(self, charge_id, amount):
        """Ask the provider to refund ``amount`` cents on the original charge.

        Returns the provider's refund id and raises ``GatewayError`` when the
        provider rejects the request.
        """
        response = requests.post(
            REFUNDS_URL,
            json={"charge": charge_id, "amount": amount},
            headers=self.headers(),
            timeout=self.timeout,
        )
        if response.status_code >= 400:
            raise GatewayError(f"refund rejected with HTTP {response.status_code}")
        return response.json()["id"]
