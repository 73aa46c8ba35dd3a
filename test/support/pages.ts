/** Paged routes, found from the route table, and the next-page token of an answer. */
import { ROUTES, TokenParam, type CursorCodec, type CursorShape, type RouteDef } from '@collab/shared';

export interface PagedRoute {
  route: RouteDef;
  /** The query parameter carrying the token. */
  param: string;
  codec: CursorCodec<CursorShape>;
}

/** Every route whose query takes a pagination token. */
export function pagedRoutes(routes: readonly RouteDef[] = ROUTES): PagedRoute[] {
  return routes.flatMap((route) =>
    Object.entries(route.query?.shape ?? {})
      .filter((entry): entry is [string, TokenParam<CursorShape>] => entry[1] instanceof TokenParam)
      .map(([param, token]) => ({ route, param, codec: token.codec })),
  );
}

/**
 * The next page's token: `pagination.token` in the body, or, for the lists whose body is a
 * bare array (threads, groups), the `token` of the URL in its `Link: <…>; rel="next"` header.
 */
export function nextPageToken(body: unknown, link: string | null | undefined): string | null {
  const pagination = (body as { pagination?: { token?: string | null } } | undefined)?.pagination;
  if (pagination) return pagination.token ?? null;
  const next = link ? /^<([^>]+)>;\s*rel="next"$/.exec(link) : null;
  return next ? new URL(next[1], 'http://link.invalid').searchParams.get('token') : null;
}

/** The route's path with each `:param` replaced by the encoded value `values` gives it. */
export function pathOf(route: RouteDef, values: Record<string, string>): string {
  return route.path.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(values[name]));
}
