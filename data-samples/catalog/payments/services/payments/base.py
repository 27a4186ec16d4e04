"""Shared plumbing for outbound payment provider gateways."""


class GatewayError(Exception):
    """Raised when a payment provider rejects or fails a request."""


class BaseGateway:
    """Common behaviour for payment providers: credentials and headers."""

    name = "base"

    def __init__(self, api_key, timeout=30):
        self.api_key = api_key
        self.timeout = timeout

    def headers(self):
        """Return the HTTP headers sent with every provider request."""
        return {
            "Authorization": f"Bearer {self.api_key}",
            "Content-Type": "application/json",
            "User-Agent": f"shop-{self.name}",
        }

    def describe(self):
        """Short human-readable description used in logs."""
        return f"{self.name} (timeout={self.timeout}s)"
