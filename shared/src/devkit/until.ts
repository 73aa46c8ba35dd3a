/**
 * Polls `condition` every `intervalMs` until it holds, and resolves with the milliseconds that
 * took; throws `timed out waiting for <what>` after `timeoutMs`. Tests and the bench wait for a
 * state this way (a queue drained, an outbox empty), never for a fixed time.
 */
export async function until(condition: () => Promise<boolean>, what: string, timeoutMs = 30_000, intervalMs = 20): Promise<number> {
  const started = Date.now();
  while (!(await condition())) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  return Date.now() - started;
}
