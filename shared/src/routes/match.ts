/**
 * Matching request paths against the route table, with Express's defaults:
 * case-insensitive literal segments, an optional trailing slash, percent-decoded parameters.
 */
import type { HttpMethod } from './route.js';

/** What matching needs of a route: the route table's routes and the services' /internal ones. */
export interface PathRoute {
  method: HttpMethod;
  path: string;
}

interface CompiledRoute<R extends PathRoute> {
  route: R;
  segments: { literal?: string; param?: string }[];
}

export interface RouteMatch<R extends PathRoute> {
  route: R;
  params: Record<string, string>;
  /**
   * The first parameter whose segment does not percent-decode to UTF-8 text (`%zz`, `%ED%A0%80`):
   * the path still names this route, so the request is refused as a bad id rather than a 404.
   */
  undecodableParam?: string;
}

export type PathLookup<R extends PathRoute> =
  | { kind: 'match'; match: RouteMatch<R> }
  /** `path`: the route table's pattern the path matched (the first such route's), for labels and logs. */
  | { kind: 'method_not_allowed'; allowed: HttpMethod[]; path: string }
  | { kind: 'not_found' };

export class RouteMatcher<R extends PathRoute> {
  private readonly compiled: CompiledRoute<R>[];

  constructor(routes: readonly R[]) {
    this.compiled = routes.map((route) => ({
      route,
      segments: route.path
        .split('/')
        .slice(1)
        .map((segment) =>
          segment.startsWith(':') ? { param: segment.slice(1) } : { literal: segment.toLowerCase() },
        ),
    }));
  }

  lookup(requestMethod: string, pathname: string): PathLookup<R> {
    // HEAD is a GET without a body, as in Express.
    const method = requestMethod.toUpperCase() === 'HEAD' ? 'GET' : requestMethod;
    const parts = pathname.split('/').slice(1);
    if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
    const allowed: HttpMethod[] = [];
    let path: string | undefined;
    for (const candidate of this.compiled) {
      const matched = matchSegments(candidate.segments, parts);
      if (!matched) continue;
      if (candidate.route.method === method.toUpperCase())
        return { kind: 'match', match: { route: candidate.route, ...matched } };
      allowed.push(candidate.route.method);
      path ??= candidate.route.path;
    }
    return path !== undefined ? { kind: 'method_not_allowed', allowed, path } : { kind: 'not_found' };
  }
}

function matchSegments(
  segments: CompiledRoute<PathRoute>['segments'],
  parts: string[],
): { params: Record<string, string>; undecodableParam?: string } | null {
  if (segments.length !== parts.length) return null;
  const params: Record<string, string> = {};
  let undecodableParam: string | undefined;
  for (let index = 0; index < segments.length; index++) {
    const { literal, param } = segments[index];
    const part = parts[index];
    if (literal !== undefined) {
      if (part.toLowerCase() !== literal) return null;
    } else {
      if (part === '') return null;
      try {
        params[param!] = decodeURIComponent(part);
      } catch {
        undecodableParam ??= param;
      }
    }
  }
  return { params, undecodableParam };
}
