// Desktop status bar: shows how full the model's context window is.

import { ContextWindowMeter } from "../context/ContextWindowMeter";
import { formatTokens } from "../context/format";

export class DesktopStatusBar {
  private root: HTMLElement | null = null;
  private label = "";

  constructor(private readonly meter: ContextWindowMeter) {}

  render(): string {
    const { used, limit } = this.meter.read();
    const percent = limit > 0 ? Math.round((used / limit) * 100) : 0;
    this.label = `Context ${formatTokens(used)} / ${formatTokens(limit)} (${percent}%)`;
    return this.label;
  }

  refresh(): void {
    this.meter.recompute();
    const text = this.render();
    if (this.root) {
      this.root.textContent = text;
    }
  }

  mount(el: HTMLElement): void {
    this.root = el;
    this.refresh();
  }
}
