/**
 * The pagination of a list whose body is a bare array (the API document's shape for threads and
 * groups) travels in headers: the total in `X-Total-Count`, the next page in `Link` (RFC 8288),
 * the same query with the next page's token.
 */
import type { ServerResponse } from 'node:http';

export interface PageHeaders {
  /** The list's path, e.g. `/v1/threads`. */
  path: string;
  /** The request's query, repeated in the next page's link. */
  query: Record<string, string>;
  total: number;
  nextToken: string | null;
}

export function setPageHeaders(res: ServerResponse, page: PageHeaders): void {
  res.setHeader('X-Total-Count', String(page.total));
  if (!page.nextToken) return;
  const next = new URLSearchParams(page.query);
  next.set('token', page.nextToken);
  res.setHeader('Link', `<${page.path}?${next.toString()}>; rel="next"`);
}
