/**
 * The per-application rate limit, kept in Redis so that every gateway replica spends from one
 * budget. GCRA (a token bucket kept as one timestamp per caller, updated by one Lua script, so
 * atomically): a caller may send `burst` requests at once, then `perMinute` a minute. Unlike a
 * fixed window, no window edge lets two windows' worth through at once. Redis's clock is the only
 * clock, so replicas whose clocks differ still agree.
 *
 * The key is the authenticated caller: the application of a server or access token, or the
 * customer of an application-management token (each customer its own budget, at the same rate).
 * Routes without a token (POST /v1/authorize, signed file links) are not limited.
 *
 * Every limited response carries `RateLimit-Limit` (the burst), `RateLimit-Remaining`,
 * `RateLimit-Reset` (seconds until the budget is whole again) and `RateLimit-Policy`
 * (`<burst>;w=<seconds to earn it back>`); a refusal is `429 rate_limited` with `Retry-After`.
 * When Redis cannot answer, requests pass unlimited (fail open, with a warning once per outage):
 * the limiter protects the API and must not take it down.
 */
import { ApiError, type Logger, type RedisClient } from '@collab/shared';
import type { ServerResponse } from 'node:http';
import type { Caller } from '../auth/authenticate.js';
import type { GatewayMetrics } from '../metrics.js';

/**
 * The script touches one key only, so on a Redis Cluster each caller's key may live in any slot:
 * the callers' budgets spread over the nodes.
 *
 * KEYS[1]: the caller's key, holding its theoretical arrival time (TAT) in microseconds.
 * ARGV: microseconds earned back per request, burst. Answers {allowed, remaining,
 * milliseconds until a request would be allowed, milliseconds until the budget is whole}.
 */
const GCRA_SCRIPT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local interval = tonumber(ARGV[1])
local horizon = interval * tonumber(ARGV[2])
local tat = math.max(tonumber(redis.call('GET', KEYS[1])) or now, now)
local next_tat = tat + interval
if next_tat - now > horizon then
  return {0, 0, math.ceil((next_tat - horizon - now) / 1000), math.ceil((tat - now) / 1000)}
end
redis.call('SET', KEYS[1], string.format('%d', next_tat), 'PX', math.ceil((next_tat - now) / 1000))
return {1, math.floor((horizon - (next_tat - now)) / interval), 0, math.ceil((next_tat - now) / 1000)}
`;

type Verdict = [allowed: number, remaining: number, retryAfterMs: number, resetMs: number];
type GcraRedis = RedisClient & { gcra(key: string, intervalUs: number, burst: number): Promise<Verdict> };

export interface RateLimitOptions {
  perMinute: number;
  /** Requests allowed at once; `perMinute` when 0. */
  burst: number;
  prefix: string;
}

/** Sets the RateLimit headers of the caller's request, or throws 429 when its budget is spent. */
export type RateLimit = (caller: Caller, res: ServerResponse) => Promise<void>;

/**
 * `redis` should fail fast (no offline queue, a short command timeout), or every request would
 * wait for Redis while it is away.
 */
export function createRateLimit(redis: RedisClient, options: RateLimitOptions, logger: Logger, metrics: GatewayMetrics): RateLimit {
  const burst = options.burst || options.perMinute;
  const intervalUs = Math.max(1, Math.round(60_000_000 / options.perMinute));
  const policy = `${burst};w=${Math.ceil((burst * intervalUs) / 1_000_000)}`;
  redis.defineCommand('gcra', { numberOfKeys: 1, lua: GCRA_SCRIPT });
  let failing = false;

  return async function rateLimit(caller, res) {
    const subject = caller.applicationId ? `application:${caller.applicationId}` : caller.customerId ? `customer:${caller.customerId}` : null;
    if (!subject) return;
    let verdict: Verdict;
    try {
      verdict = await (redis as GcraRedis).gcra(`${options.prefix}:rate-limit:${subject}`, intervalUs, burst);
    } catch (error) {
      if (!failing) logger.warn({ err: (error as Error).message }, 'rate limit store unavailable; requests pass unlimited');
      failing = true;
      return;
    }
    if (failing) logger.info('rate limit store reachable again');
    failing = false;
    const [allowed, remaining, retryAfterMs, resetMs] = verdict;
    res.setHeader('RateLimit-Policy', policy);
    res.setHeader('RateLimit-Limit', String(burst));
    res.setHeader('RateLimit-Remaining', String(remaining));
    res.setHeader('RateLimit-Reset', String(Math.ceil(resetMs / 1000)));
    if (!allowed) {
      const retryAfter = Math.max(1, Math.ceil(retryAfterMs / 1000));
      metrics.rateLimited();
      throw new ApiError(
        'rate_limited',
        `Too many requests: at most ${burst} at once and ${options.perMinute} a minute. Retry in ${retryAfter} s.`,
        { headers: { 'Retry-After': String(retryAfter) } },
      );
    }
  };
}
