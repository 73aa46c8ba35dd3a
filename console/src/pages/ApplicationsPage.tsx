import { useEffect, useState, type FormEvent } from 'react';
import { customerApi, errorMessage } from '../api/client';
import type { components } from '../api/schema';
import { SecretNotice } from './SecretNotice';

type Application = components['schemas']['Application'];

/** The customer's applications, and a form to create one (its secret shown once). */
export function ApplicationsPage() {
  const [applications, setApplications] = useState<Application[] | null>(null);
  const [error, setError] = useState('');
  const [created, setCreated] = useState<{ id: string; name: string; secret: string } | null>(null);

  const load = async () => {
    const { data, error: failure } = await customerApi.GET('/v1/applications');
    if (failure) setError(errorMessage(failure));
    else setApplications(data);
  };
  useEffect(() => {
    void load();
  }, []);

  const create = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const formElement = event.currentTarget;
    const name = String(new FormData(formElement).get('name')).trim();
    const { data, error: failure } = await customerApi.POST('/v1/applications', { body: { name } });
    if (failure) {
      setError(errorMessage(failure));
      return;
    }
    setError('');
    formElement.reset();
    setCreated({ id: data.applicationID, name, secret: data.secret });
    await load();
  };

  return (
    <>
      <h1>Applications</h1>
      {created && (
        <SecretNotice title={`Secret of ${created.name}`} secret={created.secret}>
          <p>
            <a href={`#/apps/${created.id}`}>Open {created.name}</a>
          </p>
        </SecretNotice>
      )}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <form onSubmit={create} aria-label="Create an application">
        <fieldset role="group">
          <input name="name" aria-label="New application name" placeholder="New application name" required />
          <button type="submit">Create</button>
        </fieldset>
      </form>
      {applications === null ? (
        <p aria-busy="true">Loading…</p>
      ) : applications.length === 0 ? (
        <p>No applications yet.</p>
      ) : (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">ID</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {applications.map((application) => (
                <tr key={application.id}>
                  <td>
                    <a href={`#/apps/${application.id}`}>{application.name}</a>
                  </td>
                  <td className="secret">{application.id}</td>
                  <td>{new Date(application.createdTimestamp).toLocaleString()}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
