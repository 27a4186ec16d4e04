"""Scratch file (ignored by .gitignore via tmp/); never indexed."""


def scratch_refund_experiment(order_id):
    """Quick refund processing experiment; do not import."""
    return {"order_id": order_id, "refund": "scratch"}


if __name__ == "__main__":
    print(scratch_refund_experiment("o-1"))
