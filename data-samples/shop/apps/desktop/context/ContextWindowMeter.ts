// Tracks how many tokens of the model's context window the conversation fills.

export interface ContextReading {
  used: number;
  limit: number;
}

export function estimateTokens(text: string): number {
  // Rough heuristic: about four characters per token for English prose.
  return Math.ceil(text.length / 4);
}

export class ContextWindowMeter {
  private used = 0;

  constructor(
    private readonly messages: () => string[],
    private readonly limit: number = 200000,
  ) {}

  read(): ContextReading {
    return { used: this.used, limit: this.limit };
  }

  recompute(): number {
    this.used = this.messages().reduce((total, message) => total + estimateTokens(message), 0);
    return this.used;
  }
}
