import { expect } from 'vitest';
import type { ApiResponse } from './client.js';

/** The response is the API's error envelope, exactly `{error, message}`, with this status and code. */
export function expectError(response: ApiResponse, status: number, error: string, message?: string | RegExp): void {
  expect({ status: response.status, error: response.body?.error }).toEqual({ status, error });
  expect(typeof response.body.message).toBe('string');
  expect(Object.keys(response.body).sort()).toEqual(['error', 'message']);
  if (typeof message === 'string') expect(response.body.message).toBe(message);
  else if (message) expect(response.body.message).toMatch(message);
}
