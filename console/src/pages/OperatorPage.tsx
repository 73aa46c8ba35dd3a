import { useEffect, useState } from 'react';
import { consoleCall } from '../api/client';

interface Status {
  services: { name: string; ready: boolean; status: number | null; detail: unknown }[];
  queues: { name: string; workers: number | null; counts: Record<string, number> }[];
  customers: { customers: { id: string; createdAt: string; applications: number }[]; total: number };
}

/** The operator's page: each service's readiness, each queue's worker processes and depths, the customers. */
export function OperatorPage() {
  const [status, setStatus] = useState<Status | null>(null);
  const [error, setError] = useState('');
  const load = () => consoleCall<Status>('GET', '/operator/status').then(setStatus, (failure: Error) => setError(failure.message));
  useEffect(() => {
    void load();
  }, []);
  if (error)
    return (
      <p role="alert" className="error">
        {error}
      </p>
    );
  if (!status) return <p aria-busy="true">Loading…</p>;
  return (
    <>
      <h1>Deployment</h1>
      <button type="button" className="secondary outline" onClick={load}>
        Refresh
      </button>
      <h2>Services</h2>
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Service</th>
              <th scope="col">Ready</th>
              <th scope="col">Answer</th>
            </tr>
          </thead>
          <tbody>
            <tr>
              <td>gateway</td>
              <td>yes</td>
              <td>200</td>
            </tr>
            {status.services.map((service) => (
              <tr key={service.name}>
                <td>{service.name}</td>
                <td>{service.ready ? 'yes' : 'NO'}</td>
                <td className="secret">{service.status ?? String(service.detail)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <h2>Queues and workers</h2>
      <p>Workers: the worker processes connected to each queue (none means its worker is not running).</p>
      <p>
        <a href="/admin/queues">Open the queue dashboard</a> (asks for the same operator credentials).
      </p>
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Queue</th>
              <th scope="col">Workers</th>
              <th scope="col">Waiting</th>
              <th scope="col">Active</th>
              <th scope="col">Delayed</th>
              <th scope="col">Failed</th>
            </tr>
          </thead>
          <tbody>
            {status.queues.map((queue) => (
              <tr key={queue.name}>
                <td>{queue.name}</td>
                <td>{queue.workers === 0 ? 'NONE' : (queue.workers ?? '?')}</td>
                <td>{(queue.counts.waiting ?? 0) + (queue.counts.prioritized ?? 0)}</td>
                <td>{queue.counts.active ?? 0}</td>
                <td>{queue.counts.delayed ?? 0}</td>
                <td>{queue.counts.failed ?? 0}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <h2>Customers</h2>
      <p>
        {status.customers.total} customers{status.customers.total > status.customers.customers.length && `, the first ${status.customers.customers.length} shown`}. Create one with{' '}
        <code>npm run customer -- create</code>.
      </p>
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Customer ID</th>
              <th scope="col">Applications</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {status.customers.customers.map((customer) => (
              <tr key={customer.id}>
                <td className="secret">{customer.id}</td>
                <td>{customer.applications}</td>
                <td>{new Date(customer.createdAt).toLocaleString()}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
