import { Fragment, useCallback, useState, type FormEvent, type ReactNode } from 'react';
import { appApi } from '../api/client';
import type { components } from '../api/schema';
import { DataTable, Pager, useCursor, type Column } from '../components/DataTable';
import { Field, SelectField } from '../components/Field';
import { arrayPage, ErrorLine, jsonField, useAnswer, when } from './common';

type Message = components['schemas']['Message'];
type Node = components['schemas']['MessageNode'];

/** Threads, filtered by group, resolved, location and metadata; one thread as its users saw it. */
export function ThreadsTab({ applicationId, threadId }: { applicationId: string; threadId?: string }) {
  if (threadId) return <ThreadView applicationId={applicationId} threadId={threadId} />;
  return <ThreadList applicationId={applicationId} />;
}

function ThreadList({ applicationId }: { applicationId: string }) {
  const api = appApi(applicationId);
  const [filter, setFilter] = useState<string | undefined>();
  const [formError, setFormError] = useState('');
  const cursor = useCursor();
  const page = useAnswer(
    useCallback(async () => {
      const { data, error, response } = await api.GET('/v1/threads', { params: { query: { limit: 50, filter, token: cursor.token } } });
      return error !== undefined || !data ? { error } : { data: arrayPage(data, response) };
    }, [api, filter, cursor.token]),
  );

  const choose = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    try {
      const chosen: Record<string, unknown> = {};
      const groupID = String(form.get('groupID')).trim();
      if (groupID) chosen.groupID = groupID;
      const resolved = String(form.get('resolved'));
      if (resolved !== 'any') chosen.resolvedStatus = resolved;
      const location = jsonField('Location', String(form.get('location')));
      if (location) chosen.location = location;
      const metadata = jsonField('Metadata', String(form.get('metadata')));
      if (metadata) chosen.metadata = metadata;
      setFormError('');
      cursor.first();
      setFilter(Object.keys(chosen).length ? JSON.stringify(chosen) : undefined);
    } catch (failure) {
      setFormError((failure as Error).message);
    }
  };

  return (
    <>
      <form onSubmit={choose} aria-label="Filter threads">
        <div className="grid">
          <Field label="Group ID" name="groupID" />
          <SelectField label="Resolved" name="resolved" options={['any', 'resolved', 'unresolved']} />
        </div>
        <div className="grid">
          <Field label="Location" name="location" placeholder='{"page": "docs"}' />
          <Field label="Metadata" name="metadata" placeholder='{"priority": "high"}' />
        </div>
        <button type="submit">Filter</button>
      </form>
      <ErrorLine error={formError || page.error} />
      {page.data && <p className="muted">{page.data.total} threads</p>}
      <DataTable
        columns={threadColumns(applicationId)}
        rows={page.data?.rows}
        rowKey={(thread) => thread.id}
        empty="No threads."
        cursor={cursor}
        nextToken={page.data?.next}
      />
    </>
  );
}

const threadColumns = (applicationId: string): Column<components['schemas']['Thread']>[] => [
  { header: 'Thread', cell: (thread) => <a href={`#/apps/${applicationId}/threads/${encodeURIComponent(thread.id)}`}>{thread.name || thread.id}</a> },
  { header: 'Group', cell: (thread) => thread.groupID },
  { header: 'Messages', cell: (thread) => thread.total },
  { header: 'Resolved', cell: (thread) => (thread.resolved ? 'yes' : 'no') },
];

function ThreadView({ applicationId, threadId }: { applicationId: string; threadId: string }) {
  const api = appApi(applicationId);
  const path = { params: { path: { threadID: threadId } } };
  const thread = useAnswer(useCallback(() => api.GET('/v1/threads/{threadID}', path), [api, threadId]));
  // Pages of 50, oldest first: a thread may hold more messages than a page should render.
  const cursor = useCursor();
  const messages = useAnswer(
    useCallback(
      () => api.GET('/v1/messages', { params: { query: { limit: 50, token: cursor.token, filter: JSON.stringify({ threadID: threadId }) } } }),
      [api, threadId, cursor.token],
    ),
  );
  return (
    <>
      <p>
        <a href={`#/apps/${applicationId}/threads`}>All threads</a>
      </p>
      <ErrorLine error={thread.error || messages.error} />
      {thread.data && (
        <hgroup>
          <h2>{thread.data.name || thread.data.id}</h2>
          <p>
            Group {thread.data.groupID} · {thread.data.total} messages · {thread.data.resolved ? 'resolved' : 'open'}
          </p>
        </hgroup>
      )}
      {messages.data?.messages.map((message) => <MessageView key={message.id} message={message} />)}
      <Pager cursor={cursor} nextToken={messages.data?.pagination.token} />
    </>
  );
}

function MessageView({ message }: { message: Message }) {
  const deleted = message.deletedTimestamp !== null;
  return (
    <article className={deleted ? 'message deleted' : 'message'} aria-label={`Message ${message.id}`}>
      <p className="muted">
        <strong>{message.authorID}</strong> · {when(message.createdTimestamp)}
        {message.type === 'action_message' && ' · action'}
        {message.updatedTimestamp && ' · edited'}
        {deleted && ' · deleted'}
      </p>
      {deleted ? <p><em>This message was deleted.</em></p> : <Nodes nodes={message.content} />}
      {message.attachments.map((attachment) =>
        attachment.type === 'file' ? (
          <p key={attachment.id}>
            File: <a href={attachment.url} download={attachment.name}>{attachment.name}</a> <span className="muted">({attachment.size} bytes, {attachment.uploadStatus})</span>
          </p>
        ) : (
          <blockquote key={attachment.id} aria-label="Link preview">
            <strong>{attachment.title ?? attachment.url}</strong>
            {attachment.description && <p>{attachment.description}</p>}
            <a href={attachment.url} rel="noreferrer noopener">
              {attachment.url}
            </a>
          </blockquote>
        ),
      )}
      {message.reactions.length > 0 && (
        <p className="reactions" aria-label="Reactions">
          {Object.entries(
            message.reactions.reduce<Record<string, string[]>>((byReaction, reaction) => {
              (byReaction[reaction.reaction] ??= []).push(reaction.userID);
              return byReaction;
            }, {}),
          ).map(([reaction, users]) => (
            <span key={reaction} title={users.join(', ')}>
              {reaction} {users.length}
            </span>
          ))}
        </p>
      )}
    </article>
  );
}

/** Every node type of the message document, as its users saw it. */
function Nodes({ nodes }: { nodes: Node[] | undefined }): ReactNode {
  return <>{(nodes ?? []).map((node, index) => <NodeView key={index} node={node} />)}</>;
}

function NodeView({ node }: { node: Node }): ReactNode {
  const n = node as Node & { type?: string; text?: string; children?: Node[]; user?: { id: string }; url?: string; bold?: boolean; italic?: boolean; underline?: boolean; code?: boolean; done?: boolean; bulletNumber?: number };
  if (n.type === undefined) {
    let text: ReactNode = n.text ?? '';
    if (n.code) text = <code>{text}</code>;
    if (n.bold) text = <strong>{text}</strong>;
    if (n.italic) text = <em>{text}</em>;
    if (n.underline) text = <u>{text}</u>;
    return text;
  }
  const children = <Nodes nodes={n.children} />;
  switch (n.type) {
    case 'p':
      return <p>{children}</p>;
    case 'mention':
    case 'assignee':
      return <mark title={`User ${n.user?.id ?? ''}`}>{n.children?.length ? children : n.user?.id}</mark>;
    case 'link':
      return (
        <a href={n.url} rel="noreferrer noopener">
          {children}
        </a>
      );
    case 'bullet':
      return (
        <ul>
          <li>{children}</li>
        </ul>
      );
    case 'number_bullet':
      return (
        <ol start={n.bulletNumber}>
          <li>{children}</li>
        </ol>
      );
    case 'quote':
      return <blockquote>{children}</blockquote>;
    case 'code':
      return (
        <pre tabIndex={0}>
          <code>{children}</code>
        </pre>
      );
    case 'todo':
      return (
        <p>
          <input type="checkbox" checked={n.done ?? false} readOnly aria-label="To-do done" /> {children}
        </p>
      );
    case 'markdown':
      return <div>{children}</div>;
    default:
      return <Fragment>{children}</Fragment>;
  }
}
