/** Builds identity's request handler; never listens, so tests serve it themselves. */
import { createServiceApp, routesOf, type ServiceAppWiring } from '@collab/shared';
import type { BatchContext } from './domain/batch/batch.js';
import type { IdentityContext } from './domain/context.js';
import type { ExportContext } from './domain/import/export-dump.js';
import type { ImportsContext } from './domain/import/imports.js';
import { applicationHandlers } from './http/routes/applications.routes.js';
import { authHandlers } from './http/routes/auth.routes.js';
import { batchHandlers } from './http/routes/batch.routes.js';
import { clientHandlers } from './http/routes/client.routes.js';
import { groupHandlers } from './http/routes/groups.routes.js';
import { importHandlers } from './http/routes/imports.routes.js';
import { organizationHandlers } from './http/routes/organizations.routes.js';
import { preferencesHandlers } from './http/routes/preferences.routes.js';
import { presenceHandlers } from './http/routes/presence.routes.js';
import { userHandlers } from './http/routes/users.routes.js';
import { internalRoutes } from './http/internal.routes.js';

export function createIdentityApp(
  ctx: IdentityContext,
  { batch, imports, ...wiring }: ServiceAppWiring & { batch: BatchContext; imports: ImportsContext & ExportContext },
) {
  return createServiceApp({
    ...wiring,
    service: 'identity',
    routes: routesOf('identity'),
    handlers: {
      ...authHandlers(ctx),
      ...groupHandlers(ctx),
      ...organizationHandlers(ctx),
      ...userHandlers(ctx),
      ...preferencesHandlers(ctx),
      ...presenceHandlers(ctx),
      ...clientHandlers(ctx),
      ...applicationHandlers(ctx),
      ...batchHandlers(batch),
      ...importHandlers(imports),
    },
    internal: internalRoutes(ctx),
  });
}
