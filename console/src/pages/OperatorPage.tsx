import { useEffect, useState } from 'react';
import { consoleCall } from '../api/client';

interface Status {
  services: { name: string; ready: boolean; status: number | null; detail: unknown }[];
  queues: { name: string; workers: number | null; counts: Record<string, number> }[];
}

/** The operator's page: each service's readiness, each queue's workers and depths. */
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
      <h2>Queues</h2>
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
                <td>{queue.workers ?? '?'}</td>
                <td>{(queue.counts.waiting ?? 0) + (queue.counts.prioritized ?? 0)}</td>
                <td>{queue.counts.active ?? 0}</td>
                <td>{queue.counts.delayed ?? 0}</td>
                <td>{queue.counts.failed ?? 0}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
