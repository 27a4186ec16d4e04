// Small string helpers shared across packages.

export function truncate(text: string, max: number): string {
  if (text.length <= max) {
    return text;
  }
  return text.slice(0, Math.max(0, max - 1)) + "\u2026";
}

export function padLeft(text: string, width: number, fill: string = " "): string {
  return text.length >= width ? text : fill.repeat(width - text.length) + text;
}

export function slugify(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
}
