import { identityRoutes } from './identity.routes.js';
import type { RouteDef, ServiceName } from './route.js';

export * from './route.js';
export * from './match.js';
export { identityRoutes } from './identity.routes.js';

/** Every public route of the API. */
export const ROUTES: readonly RouteDef[] = [...Object.values(identityRoutes)];

export function routesOf(service: ServiceName): RouteDef[] {
  return ROUTES.filter((route) => route.service === service);
}
