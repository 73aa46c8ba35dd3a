import { expect } from 'vitest';
// The unit tests of shared/ run its sources, so the class is taken from there, not from dist.
import { ApiError } from '../../shared/src/errors.js';

/** The ApiError `fn` throws (the test fails when it throws anything else, or nothing). */
export function errorOf(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error('expected an ApiError, but nothing was thrown');
}
