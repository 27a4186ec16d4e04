#!/usr/bin/env python3
"""Nutrition skill helper: split daily calories into macronutrient grams."""

import sys


def usage():
    print("usage: macro_calc.py CALORIES [PROTEIN_PCT]")


def macros(calories, protein_pct=30):
    """Return grams of protein, carbs and fat for a calorie target."""
    fat_pct = 25
    carb_pct = 100 - protein_pct - fat_pct
    return {
        "protein_g": round(calories * protein_pct / 100 / 4),
        "carbs_g": round(calories * carb_pct / 100 / 4),
        "fat_g": round(calories * fat_pct / 100 / 9),
    }


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    if not 1 <= len(args) <= 2:
        usage()
        return 2
    calories = int(args[0])
    protein_pct = int(args[1]) if len(args) == 2 else 30
    for name, grams in macros(calories, protein_pct).items():
        print(f"{name}: {grams}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
