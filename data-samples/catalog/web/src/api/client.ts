// Base HTTP client shared by the web app's API modules.

export const API_BASE_URL: string = process.env.API_BASE_URL ?? "http://localhost:8000";

export class HttpError extends Error {
  constructor(public readonly status: number, message: string) {
    super(message);
    this.name = "HttpError";
  }
}

export class BaseClient {
  constructor(protected readonly baseUrl: string = API_BASE_URL) {}

  protected async postJson<T>(path: string, body: unknown): Promise<T> {
    const response = await fetch(this.baseUrl + path, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!response.ok) {
      throw new HttpError(response.status, `POST ${path} failed`);
    }
    return (await response.json()) as T;
  }
}
