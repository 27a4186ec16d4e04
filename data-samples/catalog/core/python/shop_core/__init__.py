"""Helpers shared by the shop's Python services."""
