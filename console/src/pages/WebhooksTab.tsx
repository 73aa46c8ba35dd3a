import { useCallback, useState, type FormEvent } from 'react';
import { appApi, errorMessage } from '../api/client';
import type { components } from '../api/schema';
import { DataTable, useCursor, type Column } from '../components/DataTable';
import { CheckboxGroup, Field, SelectField } from '../components/Field';
import { ErrorLine, useAnswer, when } from './common';

const EVENT_TYPES = ['thread-message-added', 'notification-created', 'url-verification'] as const;
const EVENT_OPTIONS = EVENT_TYPES.map((type) => [type, type] as const);

/** Registered webhooks, the delivery log (by status and type), one delivery, and its replay. */
export function WebhooksTab({ applicationId, deliveryId }: { applicationId: string; deliveryId?: string }) {
  if (deliveryId) return <DeliveryView applicationId={applicationId} deliveryId={deliveryId} />;
  return (
    <>
      <Registrations applicationId={applicationId} />
      <Deliveries applicationId={applicationId} />
    </>
  );
}

function Registrations({ applicationId }: { applicationId: string }) {
  const path = { params: { path: { applicationID: applicationId } } };
  const webhooks = useAnswer(useCallback(() => appApi(applicationId).GET('/v1/applications/{applicationID}/webhooks', path), [applicationId]));
  const [error, setError] = useState('');

  const register = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const formElement = event.currentTarget;
    const form = new FormData(formElement);
    const events = EVENT_TYPES.filter((type) => form.get(`event-${type}`) === 'on');
    const { error: failure } = await appApi(applicationId).POST('/v1/applications/{applicationID}/webhooks', {
      ...path,
      body: { url: String(form.get('url')).trim(), events: [...events] },
    });
    if (failure) {
      setError(errorMessage(failure));
      return;
    }
    setError('');
    formElement.reset();
    await webhooks.reload();
  };

  const remove = async (webhookID: string) => {
    const { error: failure } = await appApi(applicationId).DELETE('/v1/applications/{applicationID}/webhooks/{webhookID}', {
      params: { path: { applicationID: applicationId, webhookID } },
    });
    if (failure) setError(errorMessage(failure));
    else await webhooks.reload();
  };

  return (
    <>
      <h2>Registered webhooks</h2>
      <ErrorLine error={error || webhooks.error} />
      <DataTable
        columns={[
          { header: 'URL', cell: (webhook) => webhook.url, className: 'secret' },
          { header: 'Events', cell: (webhook) => webhook.events.join(', ') },
          {
            header: 'Remove',
            cell: (webhook) => (
              <button type="button" className="secondary outline" onClick={() => remove(webhook.id)} aria-label={`Remove ${webhook.url}`}>
                Remove
              </button>
            ),
          },
        ]}
        rows={webhooks.data}
        rowKey={(webhook) => webhook.id}
        empty="None yet."
      />
      <form onSubmit={register} aria-label="Register a webhook">
        <Field label="Webhook URL" name="url" type="url" required />
        <CheckboxGroup legend="Events" options={EVENT_OPTIONS} name={(type) => `event-${type}`} checked={(type) => type !== 'url-verification'} />
        <button type="submit">Register webhook</button>
      </form>
    </>
  );
}

type Status = 'pending' | 'succeeded' | 'failed';
type EventType = (typeof EVENT_TYPES)[number];

function Deliveries({ applicationId }: { applicationId: string }) {
  const api = appApi(applicationId);
  const [filter, setFilter] = useState<{ status?: Status; type?: EventType }>({});
  const cursor = useCursor();
  const deliveries = useAnswer(
    useCallback(
      () =>
        api.GET('/v1/webhooks/deliveries', {
          params: { query: { limit: 50, token: cursor.token, filter: Object.keys(filter).length ? JSON.stringify(filter) : undefined } },
        }),
      [api, filter, cursor.token],
    ),
  );
  const choose = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const status = String(form.get('status'));
    const type = String(form.get('type'));
    cursor.first();
    setFilter({ ...(status !== 'any' ? { status: status as Status } : {}), ...(type !== 'any' ? { type: type as EventType } : {}) });
  };
  return (
    <>
      <h2>Deliveries</h2>
      <form onSubmit={choose} aria-label="Filter deliveries">
        <div className="grid">
          <SelectField label="Status" name="status" options={['any', 'pending', 'succeeded', 'failed']} />
          <SelectField label="Type" name="type" options={['any', ...EVENT_TYPES]} />
        </div>
        <div className="row">
          <button type="submit">Show</button>
          <button type="button" className="secondary outline" onClick={() => void deliveries.reload()}>
            Refresh
          </button>
        </div>
      </form>
      <ErrorLine error={deliveries.error} />
      <DataTable
        columns={deliveryColumns(applicationId)}
        rows={deliveries.data?.deliveries}
        rowKey={(delivery) => delivery.id}
        empty="No deliveries."
        cursor={cursor}
        nextToken={deliveries.data?.pagination.token}
      />
    </>
  );
}

const deliveryColumns = (applicationId: string): Column<components['schemas']['Delivery']>[] => [
  { header: 'Delivery', cell: (delivery) => <a href={`#/apps/${applicationId}/webhooks/${delivery.id}`}>{when(delivery.createdTimestamp)}</a> },
  { header: 'Type', cell: (delivery) => delivery.type },
  { header: 'URL', cell: (delivery) => delivery.url, className: 'secret' },
  { header: 'Status', cell: (delivery) => delivery.status },
  { header: 'Attempts', cell: (delivery) => delivery.attempts },
  { header: 'Last answer', cell: (delivery) => delivery.lastStatusCode ?? delivery.lastError ?? '—' },
];

const ATTEMPT_COLUMNS: Column<components['schemas']['DeliveryAttempt']>[] = [
  { header: 'Attempt', cell: (attempt) => attempt.attempt },
  { header: 'Status', cell: (attempt) => attempt.status },
  { header: 'Answer', cell: (attempt) => attempt.statusCode ?? '—' },
  { header: 'Error', cell: (attempt) => attempt.error && <span className="error">{attempt.error}</span> },
  { header: 'Started', cell: (attempt) => when(attempt.startedTimestamp) },
  { header: 'Took', cell: (attempt) => `${attempt.durationMs} ms` },
];

function DeliveryView({ applicationId, deliveryId }: { applicationId: string; deliveryId: string }) {
  const api = appApi(applicationId);
  const path = { params: { path: { deliveryID: deliveryId } } };
  const delivery = useAnswer(useCallback(() => api.GET('/v1/webhooks/deliveries/{deliveryID}', path), [api, deliveryId]));
  const attempts = useAnswer(useCallback(() => api.GET('/v1/webhooks/deliveries/{deliveryID}/attempts', path), [api, deliveryId]));
  const refresh = () => Promise.all([delivery.reload(), attempts.reload()]);
  const [error, setError] = useState('');
  const [notice, setNotice] = useState('');
  const replay = async () => {
    const { error: failure } = await api.POST('/v1/webhooks/deliveries/{deliveryID}/retry', path);
    if (failure) setError(errorMessage(failure));
    else {
      setNotice('Replay queued.');
      await refresh();
    }
  };
  const details = delivery.data;
  return (
    <>
      <p>
        <a href={`#/apps/${applicationId}/webhooks`}>All deliveries</a>
      </p>
      <h2>Delivery</h2>
      <ErrorLine error={error || delivery.error} />
      {notice && <p role="status">{notice}</p>}
      {details && (
        <>
          <dl>
            <dt>Status</dt>
            <dd data-testid="delivery-status">{details.status}</dd>
            <dt>Type</dt>
            <dd>{details.type}</dd>
            <dt>URL</dt>
            <dd className="secret">{details.url}</dd>
            <dt>Attempts</dt>
            <dd>{details.attempts}</dd>
            <dt>Last answer</dt>
            <dd>
              {details.lastStatusCode ?? '—'} {details.lastError && <span className="error">{details.lastError}</span>}
            </dd>
            <dt>Created, last attempt, next attempt</dt>
            <dd>
              {when(details.createdTimestamp)} · {when(details.lastAttemptTimestamp)} · {when(details.nextAttemptTimestamp)}
            </dd>
          </dl>
          <div className="row">
            <button type="button" onClick={replay}>
              Replay
            </button>
            <button type="button" className="secondary outline" onClick={() => void refresh()}>
              Refresh
            </button>
          </div>
          <h3>Attempts</h3>
          <ErrorLine error={attempts.error} />
          <DataTable columns={ATTEMPT_COLUMNS} rows={attempts.data?.attempts} rowKey={(attempt) => String(attempt.attempt)} empty="Not tried yet." />
          {details.body && (
            <details>
              <summary>Body</summary>
              <pre tabIndex={0}>
                <code>{details.body}</code>
              </pre>
            </details>
          )}
        </>
      )}
    </>
  );
}
