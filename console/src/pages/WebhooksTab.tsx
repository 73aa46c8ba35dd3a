import { useCallback, useState, type FormEvent } from 'react';
import { appApi, errorMessage } from '../api/client';
import { ErrorLine, NextPage, useAnswer, when } from './common';

const EVENT_TYPES = ['thread-message-added', 'notification-created', 'url-verification'] as const;

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
      <ul>
        {webhooks.data?.map((webhook) => (
          <li key={webhook.id}>
            <span className="secret">{webhook.url}</span> <span className="muted">({webhook.events.join(', ')})</span>{' '}
            <button type="button" className="secondary outline" onClick={() => remove(webhook.id)}>
              Remove
            </button>
          </li>
        ))}
      </ul>
      {webhooks.data?.length === 0 && <p>None yet.</p>}
      <form onSubmit={register} aria-label="Register a webhook">
        <label>
          Webhook URL
          <input name="url" type="url" required />
        </label>
        <fieldset>
          <legend>Events</legend>
          {EVENT_TYPES.map((type) => (
            <label key={type}>
              <input type="checkbox" name={`event-${type}`} defaultChecked={type !== 'url-verification'} />
              {type}
            </label>
          ))}
        </fieldset>
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
  const [token, setToken] = useState<string | undefined>();
  const deliveries = useAnswer(
    useCallback(
      () =>
        api.GET('/v1/webhooks/deliveries', {
          params: { query: { limit: 50, token, filter: Object.keys(filter).length ? JSON.stringify(filter) : undefined } },
        }),
      [api, filter, token],
    ),
  );
  const choose = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const status = String(form.get('status'));
    const type = String(form.get('type'));
    setToken(undefined);
    setFilter({ ...(status !== 'any' ? { status: status as Status } : {}), ...(type !== 'any' ? { type: type as EventType } : {}) });
  };
  return (
    <>
      <h2>Deliveries</h2>
      <form onSubmit={choose} aria-label="Filter deliveries">
        <div className="grid">
          <label>
            Status
            <select name="status" defaultValue="any">
              {['any', 'pending', 'succeeded', 'failed'].map((status) => (
                <option key={status}>{status}</option>
              ))}
            </select>
          </label>
          <label>
            Type
            <select name="type" defaultValue="any">
              {['any', ...EVENT_TYPES].map((type) => (
                <option key={type}>{type}</option>
              ))}
            </select>
          </label>
        </div>
        <div className="row">
          <button type="submit">Show</button>
          <button type="button" className="secondary outline" onClick={() => void deliveries.reload()}>
            Refresh
          </button>
        </div>
      </form>
      <ErrorLine error={deliveries.error} />
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Delivery</th>
              <th scope="col">Type</th>
              <th scope="col">URL</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Last answer</th>
            </tr>
          </thead>
          <tbody>
            {deliveries.data?.deliveries.map((delivery) => (
              <tr key={delivery.id}>
                <td>
                  <a href={`#/apps/${applicationId}/webhooks/${delivery.id}`}>{when(delivery.createdTimestamp)}</a>
                </td>
                <td>{delivery.type}</td>
                <td className="secret">{delivery.url}</td>
                <td>{delivery.status}</td>
                <td>{delivery.attempts}</td>
                <td>{delivery.lastStatusCode ?? delivery.lastError ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {deliveries.data?.deliveries.length === 0 && <p>No deliveries.</p>}
      <NextPage token={deliveries.data?.pagination.token} onNext={setToken} />
    </>
  );
}

function DeliveryView({ applicationId, deliveryId }: { applicationId: string; deliveryId: string }) {
  const api = appApi(applicationId);
  const delivery = useAnswer(useCallback(() => api.GET('/v1/webhooks/deliveries/{deliveryID}', { params: { path: { deliveryID: deliveryId } } }), [api, deliveryId]));
  const [error, setError] = useState('');
  const [notice, setNotice] = useState('');
  const replay = async () => {
    const { error: failure } = await api.POST('/v1/webhooks/deliveries/{deliveryID}/retry', { params: { path: { deliveryID: deliveryId } } });
    if (failure) setError(errorMessage(failure));
    else {
      setNotice('Replay queued.');
      await delivery.reload();
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
            <button type="button" className="secondary outline" onClick={() => void delivery.reload()}>
              Refresh
            </button>
          </div>
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
