import { useState, type FormEvent } from 'react';
import { consoleCall, customerApi, errorMessage } from '../api/client';
import type { Application } from '../api/client';
import { CheckboxGroup, Field } from '../components/Field';
import { ErrorLine } from './common';
import { SecretNotice } from './SecretNotice';

const EVENT_TYPES = ['thread-message-added', 'notification-created', 'url-verification'] as const;
type EventType = (typeof EVENT_TYPES)[number];
const EVENT_OPTIONS = EVENT_TYPES.map((type) => [type, type] as const);

/** Rename, settings (webhook URL with its verification, subscriptions, e-mail, redirect), rotate, delete. */
export function SettingsTab({ application, onChanged }: { application: Application; onChanged: () => Promise<void> }) {
  const [notice, setNotice] = useState('');
  const [error, setError] = useState('');
  const [rotated, setRotated] = useState<{ secret: string; previousSecretExpires: string | null } | null>(null);
  const path = { params: { path: { applicationID: application.id } } };
  const email = application.emailSettings as { name?: string | null; sender?: string | null };

  const save = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const text = (key: string) => String(form.get(key) ?? '').trim() || null;
    const subscriptions = EVENT_TYPES.filter((type) => form.get(`sub-${type}`) === 'on') as EventType[];
    setNotice('');
    setError('');
    const { error: failure } = await customerApi.PUT('/v1/applications/{applicationID}', {
      ...path,
      body: {
        name: text('name') ?? application.name,
        eventWebhookURL: text('eventWebhookURL'),
        eventWebhookSubscriptions: subscriptions,
        redirectURI: text('redirectURI'),
        emailSettings: { name: text('emailName'), sender: text('emailSender') },
      },
    });
    if (failure) {
      setError(errorMessage(failure));
      return;
    }
    setNotice(text('eventWebhookURL') ? 'Saved. The webhook URL answered its verification.' : 'Saved.');
    await onChanged();
  };

  const rotate = async () => {
    if (!window.confirm(`Issue a new secret for ${application.name}?`)) return;
    const { data, error: failure } = await customerApi.POST('/v1/applications/{applicationID}/secret', path);
    if (failure) setError(errorMessage(failure));
    else setRotated({ secret: data.secret, previousSecretExpires: data.previousSecretExpires });
  };

  const remove = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const name = String(new FormData(event.currentTarget).get('confirmName'));
    try {
      await consoleCall('POST', `/applications/${application.id}/delete`, { name });
      window.location.hash = '#/';
    } catch (failure) {
      setError((failure as Error).message);
    }
  };

  return (
    <>
      <ErrorLine error={error} />
      {notice && <p role="status">{notice}</p>}
      <form onSubmit={save} aria-label="Settings">
        <Field label="Name" name="name" defaultValue={application.name} required />
        <Field
          label="Event webhook URL"
          name="eventWebhookURL"
          type="url"
          defaultValue={application.eventWebhookURL ?? ''}
          help="Verified when saved: it must answer a url-verification event."
        />
        <CheckboxGroup
          legend="Events sent to the webhook URL"
          options={EVENT_OPTIONS}
          name={(type) => `sub-${type}`}
          checked={(type) => (application.eventWebhookSubscriptions ?? ['thread-message-added', 'notification-created']).includes(type)}
        />
        <Field label="Redirect URI" name="redirectURI" defaultValue={application.redirectURI ?? ''} />
        <div className="grid">
          <Field label="E-mail sender name" name="emailName" defaultValue={email.name ?? ''} />
          <Field label="E-mail sender address" name="emailSender" type="email" defaultValue={email.sender ?? ''} />
        </div>
        <button type="submit">Save settings</button>
      </form>

      <h2>Secret</h2>
      {rotated ? (
        <SecretNotice title="New secret" secret={rotated.secret}>
          <p>
            {rotated.previousSecretExpires
              ? `The previous secret keeps working for server tokens until ${new Date(rotated.previousSecretExpires).toLocaleString()}.`
              : 'The previous secret no longer works.'}
          </p>
        </SecretNotice>
      ) : (
        <button type="button" className="secondary" onClick={rotate}>
          Rotate secret
        </button>
      )}

      <h2>Delete</h2>
      <form onSubmit={remove} aria-label="Delete the application">
        <Field
          label={
            <>
              Type <strong>{application.name}</strong> to delete this application and everything it owns
            </>
          }
          name="confirmName"
          autoComplete="off"
          required
        />
        <button type="submit" className="contrast">
          Delete application
        </button>
      </form>
    </>
  );
}
