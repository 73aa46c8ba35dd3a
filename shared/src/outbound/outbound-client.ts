/**
 * The one HTTP client for requests to customer-given URLs (webhook deliveries, the URL-verification
 * handshake, link-preview pages). Such a URL must not become a way into this system's own network,
 * so every connection is checked for the address it actually connects to: IP-literal hosts before
 * connecting, host names inside the socket's DNS lookup (the address checked is the address used,
 * so a name that resolves to a public address once and a private one later gains nothing), and
 * again on every redirect. Each call has one deadline and a body limit, and its sockets are
 * destroyed whatever the outcome.
 */
import { lookup as systemLookup } from 'node:dns/promises';
import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { addAbortSignal } from 'node:stream';
import { describeRefusedAddress, isAddressAllowed, type Cidr } from './address-policy.js';
import { OutboundError } from './outbound-error.js';

export interface OutboundRequest {
  url: string;
  /** Default GET. */
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** One deadline for the whole call: connecting, every redirect and reading the body. */
  timeoutMs: number;
  /** Redirects followed at most (default 3); every hop is checked like the first URL. */
  maxRedirects?: number;
  /**
   * Response body bytes read at most. 0 ends the call as soon as the status and headers arrive,
   * without reading the body (`body` empty, `truncated` false).
   */
  maxBodyBytes: number;
  /** A longer body is cut to its first maxBodyBytes and marked `truncated`, or fails with `body_too_large`. */
  overLimit: 'truncate' | 'fail';
  /** Media types accepted for the final response (e.g. `text/html`); any other fails before its body is read. */
  acceptContentTypes?: string[];
}

export interface OutboundResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The body was longer than maxBodyBytes and was cut. */
  truncated: boolean;
  /** The URL that gave this response, after redirects. */
  finalUrl: string;
  /** Redirects followed. */
  redirects: number;
}

export interface OutboundClient {
  request(request: OutboundRequest): Promise<OutboundResponse>;
  /**
   * Why a request to `url` would be refused for its address (the URL's IP, or every address its
   * name resolves to now, is refused), or null. A name that does not resolve yet, or not within
   * a few seconds, gives null: that is a failure of the call, not the guard's rule.
   */
  addressRefusal(url: string): Promise<string | null>;
}

/** Resolves a host name to its IP addresses. */
export type HostResolver = (hostname: string) => Promise<string[]>;

export interface OutboundClientOptions {
  /** Ranges exempt from the public-address rule: the OUTBOUND_ALLOWED_CIDRS variable. */
  allowedCidrs: readonly Cidr[];
  /** Tests only, to make up host names that resolve to chosen addresses; never set from configuration. */
  resolveHost?: HostResolver;
}

const DEFAULT_MAX_REDIRECTS = 3;
/** How long addressRefusal waits for the resolver. */
const REFUSAL_LOOKUP_TIMEOUT_MS = 3000;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** The system resolver (hosts file, then DNS), as node's own connections use it. */
const resolveWithSystem: HostResolver = async (hostname) =>
  (await systemLookup(hostname, { all: true })).map(({ address }) => address);

export function createOutboundClient({ allowedCidrs, resolveHost = resolveWithSystem }: OutboundClientOptions): OutboundClient {
  const allowed = (address: string) => isAddressAllowed(address, allowedCidrs);
  const lookup = guardedLookup(resolveHost, allowed);

  async function send(url: URL, method: string, headers: Record<string, string>, body: OutboundRequest['body'], signal: AbortSignal) {
    // An IP-literal host is connected to without a lookup, so it is checked here instead.
    const literal = url.hostname.replace(/^\[(.*)\]$/, '$1');
    if (isIP(literal) && !allowed(literal)) throw blocked(literal);
    return new Promise<IncomingMessage>((resolve, reject) => {
      const request = (url.protocol === 'https:' ? https : http).request(url, {
        method,
        // Nothing is decompressed here, so ask for an uncompressed body: the size limit counts the bytes that arrive.
        headers: {
          ...headers,
          'accept-encoding': 'identity',
          ...(body !== undefined && { 'content-length': String(Buffer.byteLength(body)) }),
        },
        // A fresh connection per request, closed after it: every connection passes the lookup check.
        agent: false,
        lookup,
        signal,
      });
      request.once('response', resolve);
      request.on('error', reject);
      request.end(body);
    });
  }

  async function follow(request: OutboundRequest, signal: AbortSignal): Promise<OutboundResponse> {
    const maxRedirects = request.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
    let url = parseUrl(request.url);
    let method = (request.method ?? 'GET').toUpperCase();
    let body = request.body;
    const headers = Object.fromEntries(Object.entries(request.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
    for (let redirects = 0; ; redirects += 1) {
      const response = await send(url, method, headers, body, signal);
      try {
        const status = response.statusCode ?? 0;
        const location = response.headers.location;
        if (REDIRECT_STATUSES.has(status) && location !== undefined) {
          if (redirects === maxRedirects) throw new OutboundError('too_many_redirects', `More than ${maxRedirects} redirects.`);
          url = parseUrl(location, url);
          // As browsers do: 303, and 301/302 after a POST, continue as a GET without body; 307/308 repeat the request.
          if ((status === 303 && method !== 'GET' && method !== 'HEAD') || ((status === 301 || status === 302) && method === 'POST')) {
            method = 'GET';
            body = undefined;
            delete headers['content-type'];
          }
          continue;
        }
        checkContentType(response, request.acceptContentTypes);
        const read = await readBody(response, request.maxBodyBytes, request.overLimit, signal);
        return { status, headers: response.headers, ...read, finalUrl: url.toString(), redirects };
      } finally {
        response.destroy();
      }
    }
  }

  async function addressRefusal(raw: string): Promise<string | null> {
    const url = parseUrl(raw);
    const literal = url.hostname.replace(/^\[(.*)\]$/, '$1');
    let addresses: string[];
    if (isIP(literal)) addresses = [literal];
    else {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<string[]>((resolve) => (timer = setTimeout(() => resolve([]), REFUSAL_LOOKUP_TIMEOUT_MS)));
      addresses = await Promise.race([resolveHost(url.hostname).catch(() => []), timeout]).finally(() => clearTimeout(timer));
    }
    if (addresses.length === 0 || addresses.some(allowed)) return null;
    return describeRefusedAddress(addresses[0], literal === addresses[0] ? addresses[0] : `${url.hostname} (${addresses[0]})`);
  }

  return {
    addressRefusal,
    async request(request) {
      const deadline = new AbortController();
      const timer = setTimeout(
        () => deadline.abort(new OutboundError('timeout', `No complete response within ${request.timeoutMs} ms.`)),
        request.timeoutMs,
      );
      try {
        return await follow(request, deadline.signal);
      } catch (error) {
        if (deadline.signal.aborted) throw deadline.signal.reason;
        if (error instanceof OutboundError) throw error;
        throw new OutboundError('network', `Request failed: ${(error as Error).message}`, { cause: error });
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/**
 * The socket's DNS lookup: resolves the name and hands the socket only allowed addresses, so the
 * address it connects to is one that was checked. When none is allowed, the first refused one is named.
 */
function guardedLookup(resolveHost: HostResolver, allowed: (address: string) => boolean): LookupFunction {
  const usableAddresses = (hostname: string, addresses: string[]) => {
    if (addresses.length === 0) throw new OutboundError('network', `No address found for ${hostname}.`);
    const usable = addresses.filter(allowed);
    if (usable.length === 0) throw blocked(addresses[0]);
    return usable;
  };
  return (hostname, options, callback) => {
    resolveHost(hostname)
      .then((addresses) => usableAddresses(hostname, addresses))
      .then(
        (usable) => {
          if (options.all) callback(null, usable.map((address) => ({ address, family: isIP(address) })));
          else callback(null, usable[0], isIP(usable[0]));
        },
        (error: NodeJS.ErrnoException) => callback(error, ''),
      );
  };
}

function blocked(address: string): OutboundError {
  return new OutboundError('blocked_address', `Call refused: ${describeRefusedAddress(address)}.`);
}

/** Only http and https leave the system; a relative redirect resolves against the URL that sent it. */
function parseUrl(raw: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    throw new OutboundError('invalid_url', `Invalid URL '${raw}'.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new OutboundError('unsupported_scheme', `URL scheme "${url.protocol.slice(0, -1)}" is not supported.`);
  return url;
}

function checkContentType(response: IncomingMessage, accepted: string[] | undefined) {
  if (accepted === undefined) return;
  const type = (response.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (!accepted.some((candidate) => candidate.toLowerCase() === type))
    throw new OutboundError(
      'unsupported_content_type',
      `The response content type ${type === '' ? '(none)' : `"${type}"`} is not one of ${accepted.join(', ')}.`,
    );
}

async function readBody(
  response: IncomingMessage,
  maxBytes: number,
  overLimit: OutboundRequest['overLimit'],
  signal: AbortSignal,
): Promise<{ body: Buffer; truncated: boolean }> {
  if (maxBytes === 0) return { body: Buffer.alloc(0), truncated: false };
  addAbortSignal(signal, response);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response as AsyncIterable<Buffer>) {
    const room = maxBytes - size;
    if (chunk.length > room) {
      if (overLimit === 'fail') throw new OutboundError('body_too_large', `The response body is larger than ${maxBytes} bytes.`);
      chunks.push(chunk.subarray(0, room));
      return { body: Buffer.concat(chunks), truncated: true };
    }
    chunks.push(chunk);
    size += chunk.length;
  }
  return { body: Buffer.concat(chunks), truncated: false };
}
