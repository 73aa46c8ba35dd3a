/**
 * The operator's view of a deployment: each service's readiness (its own /readyz answer), the
 * worker processes BullMQ knows on each queue, each queue's job counts, and the customers.
 */
import { identityInternal, type InternalClient, type ServiceName } from '@collab/shared';
import type { Queue } from 'bullmq';

export async function operatorStatus(targets: Record<ServiceName, string>, queues: Queue[], identity: InternalClient, requestId: string) {
  const services = await Promise.all(
    (Object.entries(targets) as [ServiceName, string][]).map(async ([name, url]) => {
      try {
        const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2000) });
        const body = (await response.json().catch(() => null)) as unknown;
        return { name, ready: response.ok, status: response.status, detail: body };
      } catch (error) {
        return { name, ready: false, status: null, detail: (error as Error).message };
      }
    }),
  );
  const queueViews = await Promise.all(
    queues.map(async (queue) => {
      const [counts, workers] = await Promise.all([
        queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'completed', 'prioritized'),
        queue.getWorkersCount().catch(() => null),
      ]);
      return { name: queue.name, workers, counts };
    }),
  );
  const customers = identityInternal.customers.response.parse(
    await identity.call('GET', identityInternal.customers.path, { requestId }),
  );
  return { gateway: { ready: true }, services, queues: queueViews, customers };
}
