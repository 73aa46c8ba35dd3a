import { useEffect, useState } from 'react';
import { consoleCall } from '../api/client';
import { DataTable, type Column } from '../components/DataTable';
import { ErrorLine, when } from './common';

interface Status {
  services: { name: string; ready: boolean; status: number | null; detail: unknown }[];
  queues: { name: string; workers: number | null; counts: Record<string, number> }[];
  customers: { customers: { id: string; createdAt: string; applications: number }[]; total: number };
}

type Service = Status['services'][number];
type Queue = Status['queues'][number];
type Customer = Status['customers']['customers'][number];

const SERVICE_COLUMNS: Column<Service>[] = [
  { header: 'Service', cell: (service) => service.name },
  { header: 'Ready', cell: (service) => (service.ready ? 'yes' : 'NO') },
  { header: 'Answer', cell: (service) => service.status ?? String(service.detail), className: 'secret' },
];
const QUEUE_COLUMNS: Column<Queue>[] = [
  { header: 'Queue', cell: (queue) => queue.name },
  { header: 'Workers', cell: (queue) => (queue.workers === 0 ? 'NONE' : (queue.workers ?? '?')) },
  { header: 'Waiting', cell: (queue) => (queue.counts.waiting ?? 0) + (queue.counts.prioritized ?? 0) },
  { header: 'Active', cell: (queue) => queue.counts.active ?? 0 },
  { header: 'Delayed', cell: (queue) => queue.counts.delayed ?? 0 },
  { header: 'Failed', cell: (queue) => queue.counts.failed ?? 0 },
];
const CUSTOMER_COLUMNS: Column<Customer>[] = [
  { header: 'Customer ID', cell: (customer) => customer.id, className: 'secret' },
  { header: 'Applications', cell: (customer) => customer.applications },
  { header: 'Created', cell: (customer) => when(customer.createdAt) },
];
/** The gateway answers this page, so it is ready. */
const GATEWAY: Service = { name: 'gateway', ready: true, status: 200, detail: null };

/** The operator's page: each service's readiness, each queue's worker processes and depths, the customers. */
export function OperatorPage() {
  const [status, setStatus] = useState<Status | null>(null);
  const [error, setError] = useState('');
  const load = () => consoleCall<Status>('GET', '/operator/status').then(setStatus, (failure: Error) => setError(failure.message));
  useEffect(() => {
    void load();
  }, []);
  if (error) return <ErrorLine error={error} />;
  if (!status) return <p aria-busy="true">Loading…</p>;
  return (
    <>
      <h1>Deployment</h1>
      <button type="button" className="secondary outline" onClick={load}>
        Refresh
      </button>
      <h2>Services</h2>
      <DataTable columns={SERVICE_COLUMNS} rows={[GATEWAY, ...status.services]} rowKey={(service) => service.name} empty="No services." />
      <h2>Queues and workers</h2>
      <p>Workers: the worker processes connected to each queue (none means its worker is not running).</p>
      <p>
        <a href="/admin/queues">Open the queue dashboard</a> (asks for the same operator credentials).
      </p>
      <DataTable columns={QUEUE_COLUMNS} rows={status.queues} rowKey={(queue) => queue.name} empty="No queues." />
      <h2>Customers</h2>
      <p>
        {status.customers.total} customers{status.customers.total > status.customers.customers.length && `, the first ${status.customers.customers.length} shown`}. Create one with{' '}
        <code>npm run customer -- create</code>.
      </p>
      <DataTable columns={CUSTOMER_COLUMNS} rows={status.customers.customers} rowKey={(customer) => customer.id} empty="No customers." />
    </>
  );
}
