import { Fragment, useCallback, useState, type FormEvent, type ReactNode } from 'react';
import { appApi } from '../api/client';
import type { components } from '../api/schema';
import { ErrorLine, jsonField, NextPage, useAnswer, when } from './common';

type Message = components['schemas']['Message'];
type Node = components['schemas']['MessageNode'];

/** Threads, filtered by group, resolved, location and metadata; one thread as its users saw it. */
export function ThreadsTab({ applicationId, threadId }: { applicationId: string; threadId?: string }) {
  if (threadId) return <ThreadView applicationId={applicationId} threadId={threadId} />;
  return <ThreadList applicationId={applicationId} />;
}

function ThreadList({ applicationId }: { applicationId: string }) {
  const api = appApi(applicationId);
  const [query, setQuery] = useState<{ filter?: string; token?: string }>({});
  const [formError, setFormError] = useState('');
  // The list is a bare array: the next page's token comes in the Link header, the total in X-Total-Count.
  const page = useAnswer(
    useCallback(async () => {
      const { data, error, response } = await api.GET('/v1/threads', { params: { query: { limit: 50, ...query } } });
      if (error !== undefined || !data) return { error };
      const link = /[?&]token=([^&>]+)/.exec(response.headers.get('link') ?? '');
      return { data: { threads: data, next: link ? decodeURIComponent(link[1]!) : null, total: Number(response.headers.get('x-total-count') ?? data.length) } };
    }, [api, query]),
  );
  const threads = { error: page.error, data: page.data?.threads ?? null };

  const filter = (event: FormEvent<HTMLFormElement>) => {
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
      setQuery(Object.keys(chosen).length ? { filter: JSON.stringify(chosen) } : {});
    } catch (failure) {
      setFormError((failure as Error).message);
    }
  };

  return (
    <>
      <form onSubmit={filter} aria-label="Filter threads">
        <div className="grid">
          <label>
            Group ID
            <input name="groupID" />
          </label>
          <label>
            Resolved
            <select name="resolved" defaultValue="any">
              <option value="any">any</option>
              <option value="resolved">resolved</option>
              <option value="unresolved">unresolved</option>
            </select>
          </label>
        </div>
        <div className="grid">
          <label>
            Location
            <input name="location" placeholder='{"page": "docs"}' />
          </label>
          <label>
            Metadata
            <input name="metadata" placeholder='{"priority": "high"}' />
          </label>
        </div>
        <button type="submit">Filter</button>
      </form>
      <ErrorLine error={formError || threads.error} />
      {!threads.data ? (
        <p aria-busy="true">Loading…</p>
      ) : threads.data.length === 0 ? (
        <p>No threads.</p>
      ) : (
        <>
        <p className="muted">{page.data?.total} threads</p>
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Thread</th>
                <th scope="col">Group</th>
                <th scope="col">Messages</th>
                <th scope="col">Resolved</th>
              </tr>
            </thead>
            <tbody>
              {threads.data.map((thread) => (
                <tr key={thread.id}>
                  <td>
                    <a href={`#/apps/${applicationId}/threads/${encodeURIComponent(thread.id)}`}>{thread.name || thread.id}</a>
                  </td>
                  <td>{thread.groupID}</td>
                  <td>{thread.total}</td>
                  <td>{thread.resolved ? 'yes' : 'no'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        </>
      )}
      <NextPage token={page.data?.next} onNext={(token) => setQuery({ ...query, token })} />
    </>
  );
}

function ThreadView({ applicationId, threadId }: { applicationId: string; threadId: string }) {
  const api = appApi(applicationId);
  const path = { params: { path: { threadID: threadId } } };
  const thread = useAnswer(useCallback(() => api.GET('/v1/threads/{threadID}', path), [api, threadId]));
  const messages = useAnswer(useCallback(() => api.GET('/v1/threads/{threadID}/messages', path), [api, threadId]));
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
      {messages.data?.map((message) => <MessageView key={message.id} message={message} />)}
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
