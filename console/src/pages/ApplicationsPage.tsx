import { useEffect, useState, type FormEvent } from 'react';
import { customerApi, errorMessage } from '../api/client';
import type { components } from '../api/schema';
import { DataTable, type Column } from '../components/DataTable';
import { Field } from '../components/Field';
import { ErrorLine, when } from './common';
import { SecretNotice } from './SecretNotice';

type Application = components['schemas']['Application'];

const APPLICATION_COLUMNS: Column<Application>[] = [
  { header: 'Name', cell: (application) => <a href={`#/apps/${application.id}`}>{application.name}</a> },
  { header: 'ID', cell: (application) => application.id, className: 'secret' },
  { header: 'Created', cell: (application) => when(application.createdTimestamp) },
];

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
      <ErrorLine error={error} />
      <form onSubmit={create} aria-label="Create an application">
        <Field label="New application name" name="name" required />
        <button type="submit">Create</button>
      </form>
      <DataTable columns={APPLICATION_COLUMNS} rows={applications} rowKey={(application) => application.id} empty="No applications yet." />
    </>
  );
}
