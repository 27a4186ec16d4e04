// Wires the desktop status bar to a timer so the context meter stays current.

import { ContextWindowMeter } from "../context/ContextWindowMeter";
import { DesktopStatusBar } from "./StatusBar";

export class StatusBarController {
  private readonly bar: DesktopStatusBar;
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(meter: ContextWindowMeter, private readonly intervalMs: number = 1000) {
    this.bar = new DesktopStatusBar(meter);
  }

  attach(el: HTMLElement): void {
    this.bar.mount(el);
    if (this.timer === null) {
      this.timer = setInterval(() => this.update(), this.intervalMs);
    }
  }

  update(): void {
    this.bar.refresh();
  }
}
