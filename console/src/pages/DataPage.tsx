import { useEffect, useState, type FormEvent } from 'react';
import { customerApi, errorMessage, getCsrfToken } from '../api/client';
import type { components } from '../api/schema';
import { DataTable, type Column } from '../components/DataTable';
import { Field } from '../components/Field';
import { ErrorLine } from './common';

type Import = components['schemas']['Import'];
type Count = { entity: string; imported: number; existing: number };

const SUMMARY_COLUMNS: Column<Count>[] = [
  { header: 'Entity', cell: (row) => row.entity },
  { header: 'Imported', cell: (row) => row.imported },
  { header: 'Already there', cell: (row) => row.existing },
];

/** Import a dump of the original service (upload, then the import's progress to its summary); export one. */
export function DataPage() {
  const [uploaded, setUploaded] = useState<number | null>(null);
  const [importId, setImportId] = useState<string | null>(null);
  const [report, setReport] = useState<Import | null>(null);
  const [error, setError] = useState('');

  // Follows the import until it ends.
  useEffect(() => {
    if (!importId) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async () => {
      const { data, error: failure } = await customerApi.GET('/v1/customer/imports/{importID}', { params: { path: { importID: importId } } });
      if (stopped) return;
      if (failure) setError(errorMessage(failure));
      else setReport(data);
      if (!failure && (data.status === 'waiting' || data.status === 'active')) timer = setTimeout(poll, 500);
    };
    void poll();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [importId]);

  const upload = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const file = form.get('dump');
    if (!(file instanceof File) || file.size === 0) {
      setError('Choose the dump file first.');
      return;
    }
    setError('');
    setReport(null);
    setImportId(null);
    // XMLHttpRequest: fetch does not report upload progress.
    const request = new XMLHttpRequest();
    request.open('POST', `/console/api/customer/v1/customer/imports?overwrite=${form.get('overwrite') === 'on'}`);
    request.setRequestHeader('X-CSRF-Token', getCsrfToken());
    request.setRequestHeader('Content-Type', 'text/plain');
    request.upload.onprogress = (progress) => setUploaded(progress.lengthComputable ? progress.loaded / progress.total : null);
    request.onload = () => {
      const answer = JSON.parse(request.responseText || '{}') as { importID?: string; message?: string };
      if (request.status === 202 && answer.importID) {
        setUploaded(1);
        setImportId(answer.importID);
      } else setError(answer.message ?? `The upload failed (${request.status}).`);
    };
    request.onerror = () => setError('The upload failed: the server could not be reached.');
    request.send(file);
  };

  const finished = report && (report.status === 'completed' || report.status === 'failed');
  return (
    <>
      <h1>Import and export</h1>
      <h2>Import a dump of the original service</h2>
      <form onSubmit={upload} aria-label="Import a dump">
        <Field label="Dump file (the body of the original's GET /v1/customer/dbdump)" name="dump" type="file" required />
        <Field label="Overwrite what is already here" name="overwrite" type="checkbox" />
        <button type="submit">Import</button>
      </form>
      <ErrorLine error={error} />
      {uploaded !== null && !importId && (
        <label>
          Uploading
          <progress value={uploaded} max={1} />
        </label>
      )}
      {report && (
        <section aria-label="Import">
          <label>
            {finished ? `Import ${report.status}` : `Importing (${report.status})`}
            <progress value={report.progress.fraction} max={1} />
          </label>
          {report.error && <p className="error">{report.error}</p>}
          {finished && (
            <>
              <DataTable
                caption="Summary"
                columns={SUMMARY_COLUMNS}
                rows={Object.entries(report.counts).map(([entity, count]) => ({ entity, ...count }))}
                rowKey={(row) => row.entity}
                empty="Nothing imported."
              />
              {report.skipped.length > 0 && (
                <ul aria-label="Skipped">
                  {report.skipped.map((skipped) => (
                    <li key={skipped.table}>
                      {skipped.table}: {skipped.rows} rows skipped ({skipped.reason})
                    </li>
                  ))}
                </ul>
              )}
              {report.conflicts.length > 0 && <p>{report.conflicts.length} conflicts (see GET /v1/customer/imports/{report.importID}).</p>}
            </>
          )}
        </section>
      )}
      <h2>Export</h2>
      <p>Everything this server holds of you, as a dump in the original service's format.</p>
      <a href="/console/api/customer/v1/customer/dbdump" download="customer-dump.sql" role="button" className="secondary">
        Download the dump
      </a>
    </>
  );
}
