#!/usr/bin/env python3
"""Body-fat skill helper: compute BMI from weight (kg) and height (m)."""

import sys


def usage():
    print("usage: body_calc.py WEIGHT HEIGHT")


def bmi(weight_kg, height_m):
    """Body-mass index: weight divided by height squared."""
    return weight_kg / (height_m ** 2)


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        usage()
        return 2
    try:
        weight, height = float(args[0]), float(args[1])
    except ValueError:
        usage()
        return 2
    print(f"BMI: {bmi(weight, height):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
